/**
 * The real gateway process (its build, `apps/llm-gateway/dist/main.js`) in
 * front of testkit fake upstreams on loopback, for the browser tests.
 */
import { fileURLToPath } from 'node:url';
import { startGatewayProcess, type GatewayProcess } from '@mana/llm-testkit';

export const GATEWAY_MAIN = fileURLToPath(new URL('../../llm-gateway/dist/main.js', import.meta.url));
export const ADMIN_KEY = 'dashboard-admin-key-e2e-4f7q';

export async function startGateway(config: string, env: Record<string, string> = {}): Promise<GatewayProcess> {
  return startGatewayProcess({
    mainPath: GATEWAY_MAIN,
    missingHint: 'build first (pnpm turbo run build --filter=@mana/llm-gateway...)',
    tempPrefix: 'mana-dashboard-e2e-',
    config,
    args: ['--shutdown-grace', '2s'],
    env: { LOG_LEVEL: 'info', MANA_LLM_ADMIN_KEY: ADMIN_KEY, ...env },
  });
}

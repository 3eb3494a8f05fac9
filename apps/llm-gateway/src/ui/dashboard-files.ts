/**
 * Where the dashboard's build is: the `dist` folder of the `@mana/dashboard`
 * workspace package (a dependency of the gateway, so `pnpm start` and the
 * Docker build build it first). Loaded once at start; when it is missing
 * (a gateway built without it) the gateway still runs and `/ui/` says how to
 * build it.
 */
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { loadStaticFolder, type StaticFolder } from './static-folder.js';

export type DashboardFiles =
  | { readonly kind: 'ready'; readonly folder: StaticFolder }
  | { readonly kind: 'missing'; readonly reason: string };

export function dashboardDistDir(): string | undefined {
  try {
    return join(dirname(createRequire(import.meta.url).resolve('@mana/dashboard/package.json')), 'dist');
  } catch {
    return undefined;
  }
}

export async function loadDashboardFiles(dir: string | undefined = dashboardDistDir()): Promise<DashboardFiles> {
  if (dir === undefined) return { kind: 'missing', reason: 'the @mana/dashboard package is not installed' };
  try {
    const folder = await loadStaticFolder(dir);
    if (!folder.files.has('index.html')) return { kind: 'missing', reason: `${dir} has no index.html: run pnpm build` };
    return { kind: 'ready', folder };
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    return { kind: 'missing', reason: code === 'ENOENT' ? `${dir} does not exist: run pnpm build` : (error as Error).message };
  }
}

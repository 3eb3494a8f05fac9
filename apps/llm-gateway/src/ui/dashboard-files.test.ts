import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { dashboardDistDir, loadDashboardFiles } from './dashboard-files.js';

describe('loadDashboardFiles', () => {
  it('finds the @mana/dashboard build the gateway depends on', async () => {
    const dir = dashboardDistDir()!;
    expect(dir).toMatch(/dashboard[/\\]dist$/);
    // The gateway's tests run after `turbo run build`, which builds the dashboard first.
    expect(existsSync(join(dir, 'index.html'))).toBe(true);
    const files = await loadDashboardFiles(dir);
    expect(files.kind).toBe('ready');
  });

  it('says how to build it when the folder is missing', async () => {
    const files = await loadDashboardFiles('/nonexistent/dashboard/dist');
    expect(files).toEqual({ kind: 'missing', reason: '/nonexistent/dashboard/dist does not exist: run pnpm build' });
  });
});

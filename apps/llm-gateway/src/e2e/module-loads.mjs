// Preloaded into a gateway process by a test (NODE_OPTIONS=--import=<this file>, a
// variable any Node user can set): writes the URL of every module Node resolves
// for that process to the file named by MODULE_LOAD_LOG, one per line, using
// Node's own module customization hooks (module-load-hooks.mjs). The gateway
// knows nothing of it: what the file lists is what the process loaded.
import { register } from 'node:module';

const file = process.env.MODULE_LOAD_LOG;
if (file !== undefined && file !== '') register(new URL('./module-load-hooks.mjs', import.meta.url), { data: { file } });

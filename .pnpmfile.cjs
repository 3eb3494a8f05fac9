// better-sqlite3 (the embedded usage store) compiles a native addon at install.
// node-gyp would download Node's headers from nodejs.org, which an offline or
// sandboxed machine cannot reach; when the running Node's own headers are
// installed locally (Debian's nodejs package puts them under /usr/include/node),
// point node-gyp at them. pnpm passes only a few variables to install scripts,
// so the setting travels through `extraEnv`. An explicit npm_config_nodedir wins.
const fs = require('node:fs');
const path = require('node:path');

function localNodeDir() {
  const prefix = path.resolve(path.dirname(process.execPath), '..');
  const versionHeader = path.join(prefix, 'include', 'node', 'node_version.h');
  try {
    const text = fs.readFileSync(versionHeader, 'utf8');
    const part = (name) => (text.match(new RegExp(`#define NODE_${name}_VERSION (\\d+)`)) || [])[1];
    const version = `v${part('MAJOR')}.${part('MINOR')}.${part('PATCH')}`;
    return version === process.version ? prefix : undefined;
  } catch {
    return undefined;
  }
}

module.exports = {
  hooks: {
    updateConfig(config) {
      const nodedir = process.env.npm_config_nodedir || localNodeDir();
      if (nodedir === undefined) return config;
      return { ...config, extraEnv: { ...config.extraEnv, npm_config_nodedir: nodedir } };
    },
  },
};

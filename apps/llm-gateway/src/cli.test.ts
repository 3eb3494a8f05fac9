import { resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import { parseDuration } from '@mana/llm-router';
import { DEFAULT_CONFIG_PATH, DEFAULT_MAX_BODY_BYTES, isLoopbackHost, parseCli } from './cli.js';

function run(argv: string[], env: Record<string, string | undefined> = {}) {
  const result = parseCli(argv, env);
  if (result.kind !== 'run') throw new Error(`expected options, got ${result.kind}: ${'message' in result ? result.message : ''}`);
  return result.options;
}

describe('parseCli', () => {
  it('has documented defaults', () => {
    const o = run([]);
    expect(o).toMatchObject({
      host: '127.0.0.1',
      port: 3025,
      apiKeys: [],
      adminKey: undefined,
      logLevel: 'info',
      maxBodyBytes: DEFAULT_MAX_BODY_BYTES,
      shutdownGraceMs: 25_000,
      requestTimeoutMs: 30_000,
      insecure: false,
      authRequired: false,
      corsOrigins: [],
      configPath: DEFAULT_CONFIG_PATH,
    });
    expect(DEFAULT_MAX_BODY_BYTES).toBe(20 * 1024 * 1024);
    expect(DEFAULT_CONFIG_PATH).toMatch(/llm-gateway[/\\]aliases\.yaml$/);
  });

  it('names the replica from --replica-name or MANA_LLM_REPLICA_NAME (flag wins), else leaves it to <hostname>:<port>', () => {
    expect(run([]).replicaName).toBeUndefined();
    expect(run([], { MANA_LLM_REPLICA_NAME: 'gw-2' }).replicaName).toBe('gw-2');
    expect(run(['--replica-name', 'eu-1.gw:3025'], { MANA_LLM_REPLICA_NAME: 'gw-2' }).replicaName).toBe('eu-1.gw:3025');
    for (const bad of ['has space', 'x'.repeat(101), 'semi;colon', 'new\nline']) {
      const result = parseCli(['--replica-name', bad], {});
      expect(result.kind).toBe('error');
      expect(result.kind === 'error' && result.message).toMatch(/^Invalid --replica-name/);
    }
  });

  it('reads the environment, and flags win over it', () => {
    const env = { MANA_LLM_CONFIG: 'env.yaml', HOST: '127.0.0.2', PORT: '4000', LOG_LEVEL: 'debug', MANA_LLM_MAX_BODY: '1mb' };
    expect(run([], env)).toMatchObject({ configPath: resolve('env.yaml'), host: '127.0.0.2', port: 4000, logLevel: 'debug', maxBodyBytes: 1024 ** 2 });
    expect(run(['--config', 'a.yaml', '--port', '0', '--host', 'localhost', '--log-level', 'warn', '--max-body', '512kb'], env)).toMatchObject({
      configPath: resolve('a.yaml'),
      port: 0,
      host: 'localhost',
      logLevel: 'warn',
      maxBodyBytes: 512 * 1024,
    });
  });

  it('pnpm start: a relative config is taken from where the user ran pnpm, and `-- --config` works', () => {
    const viaStart = { npm_lifecycle_event: 'start', npm_package_name: '@mana/llm-gateway', INIT_CWD: '/home/me/project' };
    const appDir = '/repo/apps/llm-gateway';
    const parse = (argv: string[], env: Record<string, string>) => {
      const result = parseCli(argv, env, appDir);
      if (result.kind !== 'run') throw new Error(result.kind);
      return result.options.configPath;
    };
    expect(parse([], { ...viaStart, MANA_LLM_CONFIG: 'my.yaml' })).toBe('/home/me/project/my.yaml');
    expect(parse(['--', '--config', 'conf/x.yaml'], viaStart)).toBe('/home/me/project/conf/x.yaml');
    expect(parse([], { ...viaStart, MANA_LLM_CONFIG: '/etc/mana/a.yaml' })).toBe('/etc/mana/a.yaml');
    // Nothing given: the bundled config, whatever the directory.
    expect(parse([], viaStart)).toBe(DEFAULT_CONFIG_PATH);
    // Run directly (or by another package's script): the process's own directory.
    expect(parse(['--config', 'my.yaml'], { INIT_CWD: '/elsewhere' })).toBe('/repo/apps/llm-gateway/my.yaml');
    expect(parse([], { npm_lifecycle_event: 'test', npm_package_name: '@mana/llm-gateway', INIT_CWD: '/x', MANA_LLM_CONFIG: 'a.yaml' })).toBe(
      '/repo/apps/llm-gateway/a.yaml',
    );
  });

  it('reads CORS origins (flag wins over MANA_LLM_CORS_ORIGINS) as browsers send them, and refuses what is not an origin', () => {
    expect(run([], { MANA_LLM_CORS_ORIGINS: 'https://App.Example.com, http://localhost:5173/' }).corsOrigins).toEqual([
      'https://app.example.com',
      'http://localhost:5173',
    ]);
    expect(run(['--cors-origins', '*'], { MANA_LLM_CORS_ORIGINS: 'https://a.example' }).corsOrigins).toEqual(['*']);
    expect(run(['--cors-origins', 'https://a.example:443']).corsOrigins).toEqual(['https://a.example']);
    for (const bad of ['app.example.com', 'https://a.example/app', 'https://a.example?x=1', 'ftp://a.example', 'https://u:p@a.example']) {
      const result = parseCli(['--cors-origins', bad], {});
      expect(result.kind, bad).toBe('error');
      expect(result.kind === 'error' && result.message, bad).toContain('Invalid --cors-origins entry');
    }
  });

  it('splits API keys and reads the admin key from the environment only', () => {
    const o = run([], { MANA_LLM_API_KEYS: ' k1, ,k2 ', MANA_LLM_ADMIN_KEY: 'adm' });
    expect(o.apiKeys).toEqual(['k1', 'k2']);
    expect(o.adminKey).toBe('adm');
    expect(parseCli(['--api-keys', 'x'], {}).kind).toBe('error');
  });

  it('refuses a non-loopback host without keys, and says why', () => {
    const result = parseCli(['--host', '0.0.0.0'], {});
    expect(result.kind).toBe('error');
    expect(result.kind === 'error' && result.message).toMatch(
      /Refusing to listen on 0\.0\.0\.0 without API keys.*MANA_LLM_API_KEYS.*MANA_LLM_ADMIN_KEY.*service keys.*POST \/admin\/keys.*--insecure/s,
    );
    expect(run(['--host', '0.0.0.0'], { MANA_LLM_API_KEYS: 'k' })).toMatchObject({ host: '0.0.0.0', authRequired: true });
    expect(parseCli([], { HOST: '::' }).kind).toBe('error');
  });

  it('a non-loopback host with only the admin key runs with auth required (service keys are made through the admin API)', () => {
    expect(run(['--host', '0.0.0.0'], { MANA_LLM_ADMIN_KEY: 'adm' })).toMatchObject({ host: '0.0.0.0', apiKeys: [], authRequired: true, recordUsage: true });
    expect(run([], { HOST: '::', MANA_LLM_ADMIN_KEY: 'adm' }).authRequired).toBe(true);
  });

  it('the admin key alone is enough with --usage off: service keys are stored without usage recording', () => {
    for (const argv of [['--host', '0.0.0.0', '--usage', 'off'], ['--host', '0.0.0.0']]) {
      const options = run(argv, { MANA_LLM_ADMIN_KEY: 'adm', MANA_LLM_USAGE: 'off' });
      expect(options.recordUsage).toBe(false);
      expect(options.authRequired).toBe(true);
    }
    const refused = parseCli(['--host', '0.0.0.0', '--usage', 'off'], {});
    expect(refused.kind === 'error' && refused.message).toMatch(/^Refusing to listen on 0\.0\.0\.0 without API keys.*MANA_LLM_ADMIN_KEY and create service keys/s);
    expect(run(['--host', '0.0.0.0', '--usage', 'off'], { MANA_LLM_ADMIN_KEY: 'adm', MANA_LLM_API_KEYS: 'k' }).authRequired).toBe(true);
  });


  it('--insecure and loopback hosts stay as before: no refusal, auth only while a key exists', () => {
    expect(run(['--host', '0.0.0.0', '--insecure'])).toMatchObject({ insecure: true, authRequired: false });
    expect(run(['--host', '0.0.0.0', '--insecure'], { MANA_LLM_ADMIN_KEY: 'adm' }).authRequired).toBe(false);
    for (const host of ['127.0.0.1', 'localhost', '::1']) {
      expect(run(['--host', host], { MANA_LLM_ADMIN_KEY: 'adm' }).authRequired).toBe(false);
    }
  });

  it('rejects bad values with a message', () => {
    for (const argv of [['--port', 'abc'], ['--port', '70000'], ['--max-body', 'lots'], ['--log-level', 'loud'], ['--shutdown-grace', 'soon'], ['--request-timeout', '5'], ['--nope']]) {
      const result = parseCli(argv, {});
      expect(result.kind, argv.join(' ')).toBe('error');
    }
  });

  it('--schema-workers / MANA_LLM_SCHEMA_WORKERS: a whole number from 1 to 32, else refused naming the value; unset leaves the default', () => {
    expect(run([]).schemaWorkers).toBeUndefined();
    expect(run(['--schema-workers', '3']).schemaWorkers).toBe(3);
    expect(run([], { MANA_LLM_SCHEMA_WORKERS: '1' }).schemaWorkers).toBe(1);
    expect(run(['--schema-workers', '2'], { MANA_LLM_SCHEMA_WORKERS: '8' }).schemaWorkers).toBe(2);
    for (const value of ['0', '33', '1.5', 'many', '4x']) {
      expect(parseCli(['--schema-workers', value], {}), value).toEqual({
        kind: 'error',
        message: `Invalid --schema-workers "${value}": expected a whole number from 1 to 32.`,
      });
    }
  });

  it('switches tracing on from the OTEL_* environment only, and refuses what it cannot export to', () => {
    expect(run([]).tracing).toBeUndefined();
    expect(run([], { OTEL_EXPORTER_OTLP_ENDPOINT: 'http://collector:4318' }).tracing).toMatchObject({ endpoint: 'http://collector:4318/v1/traces', protocol: 'http/protobuf' });
    const grpc = parseCli([], { OTEL_EXPORTER_OTLP_ENDPOINT: 'http://collector:4317', OTEL_EXPORTER_OTLP_PROTOCOL: 'grpc' });
    expect(grpc).toMatchObject({ kind: 'error', message: expect.stringContaining('OTEL_EXPORTER_OTLP_PROTOCOL "grpc" is not supported') });
  });

  it('prints help listing every option', () => {
    const result = parseCli(['--help'], {});
    expect(result.kind).toBe('help');
    const text = result.kind === 'help' ? result.text : '';
    for (const word of ['--config', 'MANA_LLM_CONFIG', '--host', 'HOST', '--port', 'PORT', 'MANA_LLM_API_KEYS', 'MANA_LLM_ADMIN_KEY', 'LOG_LEVEL', '--max-body', '--insecure', '--shutdown-grace', '--request-timeout', 'MANA_LLM_REQUEST_TIMEOUT', '--schema-workers', 'MANA_LLM_SCHEMA_WORKERS']) {
      expect(text).toContain(word);
    }
  });
});

describe('durations, hosts', () => {
  it('parses durations', () => {
    expect(parseDuration('250')).toBe(250);
    expect(parseDuration('500ms')).toBe(500);
    expect(parseDuration('10s')).toBe(10_000);
    expect(parseDuration('2m')).toBe(120_000);
    expect(parseDuration('12h')).toBe(43_200_000);
    expect(parseDuration('30d')).toBe(2_592_000_000);
    expect(parseDuration('1w')).toBeUndefined();
  });
  it('refuses durations past 10 years, which would overflow a Date once added to now', () => {
    expect(parseDuration('3650d')).toBe(315_360_000_000);
    expect(parseDuration('3651d')).toBeUndefined();
    expect(parseDuration('99999999999h')).toBeUndefined();
  });
  it('knows loopback addresses', () => {
    for (const h of ['127.0.0.1', '127.1.2.3', 'localhost', '::1', '[::1]']) expect(isLoopbackHost(h), h).toBe(true);
    for (const h of ['0.0.0.0', '::', '10.0.0.1', '192.168.1.2', 'example.com']) expect(isLoopbackHost(h), h).toBe(false);
  });
});

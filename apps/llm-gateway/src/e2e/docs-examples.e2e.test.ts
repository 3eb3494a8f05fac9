/**
 * The docs cannot drift from the gateway: every example in README.md and
 * docs/ that a reader would run is run here.
 *
 * - Every YAML block is a config (or the part of one it explains) and is
 *   loaded by the router's config loader, completed with the `MANA_LLM`
 *   aliases of the shipped aliases.yaml it leaves out (the loader requires them).
 * - Every shell block with a `curl` runs against the BUILT gateway in the demo's
 *   setup (the demo's config and fake upstreams, `MANA_LLM_ADMIN_KEY=change-me`,
 *   usage on: what `pnpm demo -- --serve` serves), one fresh gateway per file so
 *   a file's examples run in order as a reader runs them. Each answer is checked
 *   against the comments under it (see docs/expectations.ts). The real `curl`
 *   runs them when the machine has one, else the `fetch` its arguments describe.
 * - Every TypeScript block that calls the gateway runs as a module against it.
 * - A block that is not meant to run carries `<!-- not-runnable: reason -->`
 *   right before it; those are counted, so a new one is a decision.
 * - Relative links and images point at files and headings that exist.
 */
import { execFile } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import { join, relative, dirname, resolve } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parse as parseYaml, stringify as stringifyYaml } from 'yaml';
import { parseConfig } from '@mana/llm-router';
import { MANA_LLM } from '@mana/llm-aliases';
import { startFakeOpenAI, waitUntil, type FakeUpstream } from '@mana/llm-testkit';
import { demoConfigYaml, startDemoUpstreams, type DemoUpstreams } from '../demo-setup.js';
import { anchors, codeBlocks, prose, relativeLinks, type CodeBlock } from './docs/markdown.js';
import { curlAvailable, type CurlMode } from './docs/run-curl.js';
import { runShellExample } from './docs/run-example.js';
import { REPO_ROOT, spawnGateway, type GatewayProcess, type Json } from './harness.js';

/** Where the docs say the gateway is; replaced by the test gateway's URL. */
const DOCS_GATEWAY = 'http://127.0.0.1:3025';
/** Upstream hosts of the docs' examples (a vLLM on another machine); each is replaced by a loopback fake. */
const STAND_INS = ['http://10.0.0.5:8000/v1', 'http://10.0.0.6:8000/v1'];
/** The admin key the docs' tour starts the demo with. */
const ADMIN_KEY = 'change-me';
/**
 * The examples marked `<!-- not-runnable: … -->`, as `file:line`. A new mark
 * goes here too: an example that does not run is a decision, not an accident.
 */
const NOT_RUNNABLE: readonly string[] = [
  // The OpenAI Agents SDK: @openai/agents needs openai 7, which needs Node 22.
  'docs/api/responses.md:144',
];

const SHELL_LANGS = new Set(['sh', 'bash', 'shell', 'console', '']);
const TS_LANGS = new Set(['ts', 'typescript', 'js', 'javascript', 'mjs']);

function markdownFiles(): string[] {
  const docs = (dir: string): string[] =>
    readdirSync(join(REPO_ROOT, dir), { withFileTypes: true }).flatMap((e) =>
      e.isDirectory() ? docs(join(dir, e.name)) : e.name.endsWith('.md') ? [join(dir, e.name)] : [],
    );
  return ['README.md', ...docs('docs')];
}

const read = (file: string): string => readFileSync(join(REPO_ROOT, file), 'utf8');
const FILES = markdownFiles();
const BLOCKS: CodeBlock[] = FILES.flatMap((file) => codeBlocks(file, read(file)));
const where = (b: CodeBlock): string => `${b.file}:${b.line}`;

const isCurl = (b: CodeBlock): boolean => SHELL_LANGS.has(b.lang) && /^\s*(?:[A-Z_]+=\$\()?curl\s/m.test(b.text);
/** `ADMIN="…"; GW=…`: a block that only sets variables for the curl blocks after it. */
const ASSIGNMENTS = /^(?:[A-Za-z_][A-Za-z0-9_]*=(?:"[^"]*"|'[^']*'|[^\s;"']*)\s*;?\s*)+$/;
const isAssignments = (b: CodeBlock): boolean =>
  SHELL_LANGS.has(b.lang) && b.text.split('\n').filter((l) => l.trim() !== '' && !l.trim().startsWith('#')).every((l) => ASSIGNMENTS.test(l.trim()));
const callsGateway = (b: CodeBlock): boolean => TS_LANGS.has(b.lang) && b.text.includes(DOCS_GATEWAY);
const runnable = (b: CodeBlock): boolean => b.notRunnable === undefined;

const YAML_BLOCKS = BLOCKS.filter((b) => (b.lang === 'yaml' || b.lang === 'yml') && runnable(b));
const CURL_BLOCKS = BLOCKS.filter((b) => isCurl(b) && runnable(b));
/** What runs on each page, in order: the curl blocks and the variable blocks before them. */
const SHELL_BLOCKS = BLOCKS.filter((b) => (isCurl(b) || isAssignments(b)) && runnable(b));
const TS_BLOCKS = BLOCKS.filter((b) => callsGateway(b) && runnable(b));

describe('docs: the examples are found', () => {
  it('the docs hold YAML configs, curl examples and SDK examples to run', () => {
    expect(FILES).toContain('docs/configuration.md');
    expect(YAML_BLOCKS.length).toBeGreaterThanOrEqual(2);
    expect(CURL_BLOCKS.length).toBeGreaterThanOrEqual(10);
    expect(TS_BLOCKS.length).toBeGreaterThanOrEqual(2);
  });

  it('every example that does not run is marked not-runnable, with a reason, and counted', () => {
    const marked = BLOCKS.filter((b) => !runnable(b)).map(where);
    expect(marked).toEqual(NOT_RUNNABLE);
  });

  it('a curl command with a URL is a code block (run here), never inline code (run by nothing)', () => {
    const inline = FILES.flatMap((file) =>
      prose(read(file))
        .split('\n')
        .flatMap((line, i) => (/`curl\s[^`]*https?:\/\//.test(line) ? [`${file}:${i + 1}`] : [])),
    );
    expect(inline).toEqual([]);
  });
});

describe('docs: every YAML config loads with the config loader', () => {
  const shipped = parseYaml(read('apps/llm-gateway/aliases.yaml')) as Json;

  /** The example plus the shipped aliases (and their providers) it leaves out. */
  function completed(example: Json): Json {
    const out = { ...example, aliases: { ...(example.aliases ?? {}) }, providers: { ...(example.providers ?? {}) } };
    for (const alias of Object.values(MANA_LLM)) {
      if (alias in out.aliases) continue;
      out.aliases[alias] = shipped.aliases[alias];
      const chain = (shipped.aliases[alias].chain ?? shipped.aliases[alias]) as (string | { target: string })[];
      for (const entry of chain) {
        const provider = (typeof entry === 'string' ? entry : entry.target).split('/')[0]!;
        if (!(provider in out.providers) && shipped.providers?.[provider] !== undefined) out.providers[provider] = shipped.providers[provider];
      }
    }
    if (Object.keys(out.providers).length === 0) delete out.providers;
    return out;
  }

  it.each(YAML_BLOCKS.map((b) => [where(b), b] as const))('%s', (name, block) => {
    const example = parseYaml(block.text) as Json;
    expect(typeof example, `${name} is not a YAML mapping`).toBe('object');
    const snapshot = parseConfig(stringifyYaml(completed(example)), { source: name, env: {} });
    // The example's own entries are what was loaded, not replaced by the completion.
    for (const alias of Object.keys(example.aliases ?? {})) expect(snapshot.aliases.has(alias), `${name}: alias ${alias}`).toBe(true);
    for (const provider of Object.keys(example.providers ?? {})) expect(snapshot.providers.has(provider), `${name}: provider ${provider}`).toBe(true);
  });
});

/** The gateway of `pnpm demo -- --serve`, as the built process: the demo's config and fakes, the docs' admin key. */
interface DemoGateway {
  readonly gw: GatewayProcess;
  readonly upstreams: DemoUpstreams;
  readonly standIns: FakeUpstream[];
  /** The block's text as a reader runs it against this gateway. */
  localise(text: string): string;
  stop(): Promise<void>;
}

async function startDemoGateway(options: { readsUsage: boolean }): Promise<DemoGateway> {
  const upstreams = await startDemoUpstreams();
  const standIns = await Promise.all(STAND_INS.map((_, i) => startFakeOpenAI({ name: `stand-in-${i}` })));
  const gw = await spawnGateway({ config: demoConfigYaml(upstreams), env: { MANA_LLM_ADMIN_KEY: ADMIN_KEY } });
  // What the demo does before it stays up: three requests, so Ollama is known to be down and usage holds records.
  for (const [model, stream] of [[MANA_LLM.FAST_TEXT, false], [MANA_LLM.LONG_FORM, true], [MANA_LLM.FAST_TEXT, false]] as const) {
    const res = await fetch(`${gw.url}/v1/chat/completions`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ model, stream, messages: [{ role: 'user', content: 'What is the capital of France?' }] }),
    });
    expect(res.status).toBe(200);
    await res.text();
  }
  // The usage writer starts with the first record; a page that reads usage reads those three.
  if (options.readsUsage) {
    await waitUntil('the demo requests are stored', async () => {
      const health = (await (await fetch(`${gw.url}/v1/health`)).json()) as Json;
      return health.usage.written >= 3;
    }, 20_000);
  }
  return {
    gw,
    upstreams,
    standIns,
    localise: (text) => STAND_INS.reduce((t, host, i) => t.replaceAll(host, standIns[i]!.baseUrl), text.replaceAll(DOCS_GATEWAY, gw.url)),
    async stop() {
      await gw.stop();
      await Promise.all([upstreams.close(), ...standIns.map((s) => s.close())]);
    },
  };
}

const MODE: CurlMode = curlAvailable() ? 'binary' : 'fetch';
const ENV = { MANA_LLM_ADMIN_KEY: ADMIN_KEY };
/** What runs, page by page in document order: shell blocks (curl and their variables) and SDK blocks. */
const RUN_BLOCKS = [...SHELL_BLOCKS, ...TS_BLOCKS].sort((a, b) => FILES.indexOf(a.file) - FILES.indexOf(b.file) || a.line - b.line);
const runFiles = FILES.filter((file) => RUN_BLOCKS.some((b) => b.file === file));

async function runTs(demo: DemoGateway, block: CodeBlock): Promise<string> {
  // As a module from the gateway's folder, so `openai`, `ai` and `@mana/llm-aliases` resolve as in an app.
  return new Promise<string>((done, fail) => {
    execFile(
      process.execPath,
      ['--input-type=module', '-e', demo.localise(block.text)],
      { cwd: resolve(REPO_ROOT, 'apps/llm-gateway'), timeout: 30_000, env: { PATH: process.env.PATH ?? '' } },
      (error, stdout, stderr) => (error ? fail(new Error(`${where(block)}: ${error.message}\n${stderr}`)) : done(stdout)),
    );
  });
}

describe.each(runFiles)(`docs: the examples of %s run against the demo gateway (curl examples with ${MODE === 'binary' ? 'curl' : 'fetch'})`, (file) => {
  let demo: DemoGateway;
  // One terminal per page: a variable set by one block is there in the next.
  const vars = new Map(Object.entries(ENV));
  const blocks = RUN_BLOCKS.filter((b) => b.file === file);
  beforeAll(async () => {
    demo = await startDemoGateway({ readsUsage: blocks.some((b) => b.text.includes('/admin/usage/')) });
  }, 60_000);
  afterAll(async () => {
    await demo?.stop();
  });

  it.each(blocks.map((b) => [where(b), b] as const))('%s', async (name, block) => {
    if (TS_BLOCKS.includes(block)) {
      // The example printed what it computed (the demo's answer, or the vectors' sizes) and exited 0.
      expect((await runTs(demo, block)).trim()).not.toBe('');
      return;
    }
    const reports = await runShellExample(demo.localise(block.text), vars, MODE);
    const failed = reports.filter((r) => r.problems.length > 0).map((r) => `${block.file}:${block.line + r.line}  ${r.command}\n    ${r.problems.join('\n    ')}`);
    expect(failed, `${name}:\n${failed.join('\n')}`).toEqual([]);
  }, 60_000);

  // The fallback for machines without curl is itself checked where curl exists: the README's tour, both ways.
  if (file === 'README.md' && MODE === 'binary') {
    it("the tour's curl examples answer the same through fetch", async () => {
      for (const block of blocks.filter((b) => isCurl(b)).slice(0, 2)) {
        const reports = await runShellExample(demo.localise(block.text), new Map(Object.entries(ENV)), 'fetch');
        expect(reports.flatMap((r) => r.problems), `${where(block)} through fetch`).toEqual([]);
      }
    }, 60_000);
  }
});

describe('docs: links', () => {
  const linked = [...FILES, 'apps/llm-gateway/README.md', 'apps/dashboard/README.md'];

  it.each(linked)('every relative link and image of %s points at a file and a heading that exist', (file) => {
    const broken: string[] = [];
    for (const link of relativeLinks(read(file))) {
      const [path, anchor] = link.target.split('#') as [string, string | undefined];
      const target = path === '' ? file : relative(REPO_ROOT, resolve(REPO_ROOT, dirname(file), decodeURI(path)));
      let text: string | undefined;
      try {
        text = readdirSafe(target) ?? read(target);
      } catch {
        broken.push(`${file}:${link.line} ${link.target} (no such file)`);
        continue;
      }
      if (anchor !== undefined && target.endsWith('.md') && !anchors(text).has(anchor)) broken.push(`${file}:${link.line} ${link.target} (no such heading)`);
    }
    expect(broken).toEqual([]);
  });
});

/** A folder link (`apps/llm-gateway`) is fine as long as the folder exists. */
function readdirSafe(path: string): string | undefined {
  try {
    readdirSync(join(REPO_ROOT, path));
    return '';
  } catch {
    return undefined;
  }
}

describe('docs: the README is a front page', () => {
  const readme = read('README.md');

  it('starts with the two commands, and CI runs the second', () => {
    const top = readme.split('\n').slice(0, 6);
    expect(top[0]).toBe('# Mana LLM gateway');
    expect(top.slice(2)).toEqual([
      '```sh',
      'npx --yes pnpm@12.4.2 install --frozen-lockfile && npx --yes pnpm@12.4.2 start',
      'npx --yes pnpm@12.4.2 install --frozen-lockfile && npx --yes pnpm@12.4.2 validate:all',
      '```',
    ]);
    expect(read('.ci/run')).toContain(`{ ${top[4]}; }`);
  });

  it('is at most 250 lines: the rest lives in docs/', () => {
    expect(readme.split('\n').length).toBeLessThanOrEqual(250);
  });
});

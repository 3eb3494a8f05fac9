/**
 * The real agent CLIs, as pinned in package.json, against the built gateway:
 * Claude Code (`/v1/messages`), Codex (`/v1/responses`) and opencode (chat
 * completions). Each gets a two-tool-call task through `mana/reasoning`,
 * whose first target is dead, once with an `anthropic` target behind it and
 * once with an OpenAI-compatible one; the scripted fake upstreams answer with
 * calls to the client's own tools (agent-script.ts), then with a marker once
 * both results came back. The run must end with the marker.
 *
 * `AGENT_CLI_ROOT` (set by `pnpm test:agents:latest`) names a folder holding
 * other versions of the three CLIs; unset, the pinned ones run.
 */
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { refusingPort, startFakeAnthropic, startFakeOpenAI, type FakeUpstream } from '@mana/llm-testkit';
import { aliasesYaml, deadThenCloud, spawnGateway, type GatewayProcess } from '../harness.js';
import { cliFile, isolatedEnv, platformBinary, runCli, tempHome, type CliRun } from './agent-cli.js';
import { agentScript, type AgentStep } from './agent-script.js';
import { startRequestTap } from './request-tap.js';

const KEY = 'sk-mana-agent-clis-e2e-91b2';
const ANTHROPIC_KEY = 'sk-ant-agent-clis-e2e-4d0e';
const SECRET = 'violet-otter-4417';
const ECHOED = 'gateway-echo-2208';
const MARKER = 'AGENT-LOOP-COMPLETE-73';
/** Per CLI run: startup, five or so requests, two tools. */
const RUN_TIMEOUT_MS = 90_000;
/** The run, plus writing its home and scripting the fakes. */
const TEST_TIMEOUT_MS = RUN_TIMEOUT_MS + 15_000;

const from = process.env.AGENT_CLI_ROOT === undefined ? import.meta.url : pathToFileURL(join(process.env.AGENT_CLI_ROOT, 'package.json')).href;

type TargetKind = 'anthropic' | 'openai';
let fakes: Record<TargetKind, FakeUpstream>;
let gateways: Record<TargetKind, GatewayProcess>;

beforeAll(async () => {
  const claude = await startFakeAnthropic({ apiKey: ANTHROPIC_KEY });
  const cloud = await startFakeOpenAI();
  fakes = { anthropic: claude, openai: cloud };
  const dead = await refusingPort();
  const head = deadThenCloud(dead, cloud.baseUrl, `  anthropic: { base_url: "${claude.url}" }\n`);
  const env = { MANA_LLM_API_KEYS: KEY, ANTHROPIC_API_KEY: ANTHROPIC_KEY };
  const [a, o] = await Promise.all([
    spawnGateway({ config: head + aliasesYaml({ 'mana/reasoning': ['dead/m0', 'anthropic/claude-sonnet-4-5'] }, ['dead/m0', 'anthropic/claude-sonnet-4-5']), env }),
    spawnGateway({ config: head + aliasesYaml({ 'mana/reasoning': ['dead/m0', 'cloud/m1'] }, ['dead/m0', 'cloud/m1']), env }),
  ]);
  gateways = { anthropic: a, openai: o };
}, 60_000);

afterAll(async () => {
  await Promise.all([gateways?.anthropic?.stop(), gateways?.openai?.stop()]);
  await Promise.all([fakes?.anthropic?.close(), fakes?.openai?.close()]);
});

/** A work folder with the file the first tool reads. */
function workFolder(home: string): string {
  const work = join(home, 'work');
  mkdirSync(work, { recursive: true });
  writeFileSync(join(work, 'notes.txt'), `The code word is ${SECRET}.\n`);
  return work;
}

/** Scripts both fakes for one CLI's steps (the model names of the two chains). */
function script(steps: readonly AgentStep[]): void {
  fakes.anthropic.on('claude-sonnet-4-5', agentScript('messages', steps, MARKER));
  fakes.openai.on('m1', agentScript('chat', steps, MARKER));
}

function explain(run: CliRun): string {
  return `exit ${run.code} after ${run.ms} ms\nstdout: ${run.stdout.slice(-3000)}\nstderr: ${run.stderr.slice(-3000)}`;
}

const TARGETS: readonly TargetKind[] = ['anthropic', 'openai'];

describe('Claude Code', () => {
  const claude = platformBinary('@anthropic-ai/claude-code', `@anthropic-ai/claude-code-${process.platform}-${process.arch}`, 'claude', from);

  it.each(TARGETS)('Read then Bash through mana/reasoning on an %s target; its first request gets 200, and count_tokens counts it', async (target) => {
    const home = tempHome('mana-claude-code-');
    // Between the CLI and the gateway: the CLI's own first request, as this version sends it.
    const tap = await startRequestTap(gateways[target].url);
    try {
      const work = workFolder(home.path);
      script([
        { tools: ['Read'], input: { file_path: join(work, 'notes.txt') }, expect: SECRET },
        { tools: ['Bash'], input: { command: `echo ${ECHOED}`, description: 'Print a word' }, expect: ECHOED },
      ]);
      const before = fakes[target].requests.length;
      // The README's line (`ANTHROPIC_BASE_URL=… ANTHROPIC_AUTH_TOKEN=… claude --model mana/reasoning`), run with -p.
      const run = await runCli(claude, ['--model', 'mana/reasoning', '-p', 'Read notes.txt, then echo a word.', '--output-format', 'json', '--allowedTools', 'Read', 'Bash(echo *)'], {
        cwd: work,
        timeoutMs: RUN_TIMEOUT_MS,
        env: isolatedEnv(home.path, {
          ANTHROPIC_BASE_URL: tap.url,
          ANTHROPIC_AUTH_TOKEN: KEY,
          CLAUDE_CONFIG_DIR: join(home.path, '.claude'),
          CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC: '1',
          DISABLE_TELEMETRY: '1',
          DISABLE_AUTOUPDATER: '1',
          DISABLE_ERROR_REPORTING: '1',
        }),
      });
      expect(run.code, explain(run)).toBe(0);
      expect((JSON.parse(run.stdout) as { result: string }).result).toContain(MARKER);
      // Its requests reached this target (after the dead one), all three turns of the loop among them.
      expect(fakes[target].requests.length - before).toBeGreaterThanOrEqual(3);
      const first = tap.requests.find((r) => r.method === 'POST' && r.path.startsWith('/v1/messages') && !r.path.includes('count_tokens'));
      expect(first?.status, first?.body.slice(0, 2000)).toBe(200);
      // The same body, as sent, to count_tokens: counted, tools and system turns included.
      const counted = await fetch(`${gateways[target].url}/v1/messages/count_tokens`, {
        method: 'POST',
        headers: { authorization: `Bearer ${KEY}`, 'content-type': 'application/json', 'anthropic-version': '2023-06-01' },
        body: first!.body,
      });
      const countedBody = await counted.text();
      expect(counted.status, countedBody).toBe(200);
      expect((JSON.parse(countedBody) as { input_tokens: number }).input_tokens).toBeGreaterThan(JSON.stringify((JSON.parse(first!.body) as { messages: unknown }).messages).length / 8);
    } finally {
      await tap.close();
      home.remove();
    }
  }, TEST_TIMEOUT_MS);
});

describe('Codex', () => {
  // Its launcher (bin/codex.js) finds the platform binary itself.
  const codex = cliFile('@openai/codex', 'bin/codex.js', from);

  it.each(TARGETS)('two exec_command calls through mana/reasoning on an %s target', async (target) => {
    const home = tempHome('mana-codex-');
    try {
      const work = workFolder(home.path);
      script([
        { tools: ['exec_command', 'shell'], input: { cmd: 'cat notes.txt', workdir: work }, expect: SECRET },
        { tools: ['exec_command', 'shell'], input: { cmd: `echo ${ECHOED}`, workdir: work }, expect: ECHOED },
      ]);
      const codexHome = join(home.path, '.codex');
      mkdirSync(codexHome);
      writeFileSync(
        join(codexHome, 'config.toml'),
        [
          'model_provider = "mana"',
          'web_search = "disabled"',
          'check_for_update_on_startup = false',
          '[analytics]',
          'enabled = false',
          '[model_providers.mana]',
          'name = "mana"',
          `base_url = "${gateways[target].url}/v1"`,
          'wire_api = "responses"',
          'env_key = "MANA_KEY"',
          '',
        ].join('\n'),
      );
      const before = fakes[target].requests.length;
      const last = join(home.path, 'last.txt');
      const run = await runCli(process.execPath, [codex, 'exec', '--skip-git-repo-check', '--ephemeral', '--json', '-s', 'read-only', '-m', 'mana/reasoning', '-o', last, 'Read notes.txt, then echo a word.'], {
        cwd: work,
        timeoutMs: RUN_TIMEOUT_MS,
        env: isolatedEnv(home.path, { CODEX_HOME: codexHome, MANA_KEY: KEY }),
      });
      expect(run.code, explain(run)).toBe(0);
      expect(readFileSync(last, 'utf8')).toContain(MARKER);
      expect(fakes[target].requests.length - before).toBeGreaterThanOrEqual(3);
    } finally {
      home.remove();
    }
  }, TEST_TIMEOUT_MS);
});

describe('opencode', () => {
  const linux = process.platform === 'linux';
  const opencode = platformBinary('opencode-ai', `opencode-${linux ? 'linux' : process.platform}-${process.arch}`, 'bin/opencode', from);

  it.each(TARGETS)('read then bash through mana/reasoning on an %s target', async (target) => {
    const home = tempHome('mana-opencode-');
    try {
      const work = workFolder(home.path);
      script([
        { tools: ['read'], input: { filePath: join(work, 'notes.txt') }, expect: SECRET },
        { tools: ['bash'], input: { command: `echo ${ECHOED}`, description: 'Print a word' }, expect: ECHOED },
      ]);
      const config = {
        $schema: 'https://opencode.ai/config.json',
        autoupdate: false,
        share: 'disabled',
        permission: { read: 'allow', bash: 'allow', edit: 'deny', webfetch: 'deny' },
        provider: {
          mana: {
            // Bundled with opencode: nothing is installed at run time.
            npm: '@ai-sdk/openai-compatible',
            name: 'Mana gateway',
            options: { baseURL: `${gateways[target].url}/v1`, apiKey: KEY },
            models: { 'mana/reasoning': { name: 'mana/reasoning', tool_call: true } },
          },
        },
      };
      const configFile = join(home.path, 'opencode.json');
      writeFileSync(configFile, JSON.stringify(config));
      const before = fakes[target].requests.length;
      const run = await runCli(opencode, ['run', '-m', 'mana/mana/reasoning', 'Read notes.txt, then echo a word.'], {
        cwd: work,
        timeoutMs: RUN_TIMEOUT_MS,
        env: isolatedEnv(home.path, {
          OPENCODE_CONFIG: configFile,
          OPENCODE_DISABLE_AUTOUPDATE: '1',
          OPENCODE_DISABLE_MODELS_FETCH: '1',
          OPENCODE_DISABLE_LSP_DOWNLOAD: '1',
          OPENCODE_DISABLE_DEFAULT_PLUGINS: '1',
        }),
      });
      expect(run.code, explain(run)).toBe(0);
      expect(run.stdout).toContain(MARKER);
      expect(fakes[target].requests.length - before).toBeGreaterThanOrEqual(3);
    } finally {
      home.remove();
    }
  }, TEST_TIMEOUT_MS);
});

/**
 * Codex's requests to `/v1/responses`, through the built gateway with the
 * alias's first target dead: the second turn of a shell-command round trip
 * as Codex CLI 0.171.0 sends it (fixtures/codex-responses.json: developer
 * messages, the earlier turn's items with the ids the gateway gave them, a
 * function_call_output, function tools and its sub-agent tools grouped in a
 * `namespace` tool, `reasoning`, `include`, `store: false`,
 * `client_metadata`). What Codex notices: a stream that completes; what the
 * upstream gets: the conversation and the tools as chat's.
 */
import { readFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { refusingPort, startFakeOpenAI, type FakeUpstream } from '@mana/llm-testkit';
import { aliasesYaml, deadThenCloud, spawnGateway, type GatewayProcess, type Json } from './harness.js';
import { expectConsistentStream, lastSent, outputText } from './responses-events.js';
import { responsesEvents } from './sse-frames.js';

const KEY = 'sk-mana-responses-codex-e2e-8d04';
const CODEX = JSON.parse(readFileSync(new URL('./fixtures/codex-responses.json', import.meta.url), 'utf8')) as Json;
/** The same turn without the sub-agent tools: what Codex sends with `[agents] enabled = false`. */
const CODEX_WITHOUT_AGENTS = { ...CODEX, tools: CODEX.tools.filter((t: Json) => t.type !== 'namespace') };

let cloud: FakeUpstream;
let gw: GatewayProcess;

beforeAll(async () => {
  cloud = await startFakeOpenAI();
  cloud.on('m1', { kind: 'answer', content: 'The command printed hello.', chunks: 2 });
  // The model asks for a sub-agent: a call to a namespace's function, by the flat name it was offered under.
  cloud.on('m2', { kind: 'answer', chunks: 2, toolCalls: [{ id: 'call_spawn', function: { name: 'multi_agent_v1__spawn_agent', arguments: '{"message":"look"}' } }] });
  const config = deadThenCloud(await refusingPort(), cloud.baseUrl) + aliasesYaml({ 'mana/sub-agents': ['dead/m0', 'cloud/m2'] }, ['dead/m0', 'cloud/m1']);
  gw = await spawnGateway({ config, env: { MANA_LLM_API_KEYS: KEY } });
}, 60_000);

afterAll(async () => {
  await gw?.stop();
  await cloud?.close();
});

async function codexTurn(body: Json): Promise<Json> {
  const res = await fetch(`${gw.url}/v1/responses`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', authorization: `Bearer ${KEY}`, accept: 'text/event-stream' },
    body: JSON.stringify(body),
    signal: AbortSignal.timeout(15_000),
  });
  if (res.status !== 200) expect.fail(`${res.status} ${await res.text()}`);
  expect(res.headers.get('x-mana-llm-resolved')).toBe(body.model === 'mana/sub-agents' ? 'cloud/m2' : 'cloud/m1');
  return expectConsistentStream(responsesEvents(await res.text()));
}

/** The names of the functions the upstream was offered. */
const offered = (): string[] => lastSent(cloud).tools.map((t: Json) => t.function.name);

describe("Codex's Responses requests", () => {
  it('the turn as Codex sends it by default, its sub-agent tools in a namespace tool: a completed stream, every function offered upstream', async () => {
    const final = await codexTurn(CODEX);
    expect(outputText(final)).toBe('The command printed hello.');
    expect(offered()).toEqual(expect.arrayContaining(['exec_command', 'view_image', 'get_goal']));
    // A namespace's functions go upstream as <namespace>__<name>: chat's tool list is flat.
    expect(offered()).toEqual(expect.arrayContaining(['multi_agent_v1__close_agent', 'multi_agent_v1__spawn_agent']));
    expect(final.tools).toContainEqual(expect.objectContaining({ type: 'namespace', name: 'multi_agent_v1' }));
  });

  it("a call to a namespace's function comes back under its own name and namespace, and goes upstream again by the flat name", async () => {
    const final = await codexTurn({ ...CODEX, model: 'mana/sub-agents' });
    const call = final.output.find((item: Json) => item.type === 'function_call');
    expect(call).toMatchObject({ name: 'spawn_agent', namespace: 'multi_agent_v1', call_id: 'call_spawn', arguments: '{"message":"look"}' });
    // The next turn, as Codex sends it: the call it got and its output.
    const output = { type: 'function_call_output', call_id: 'call_spawn', output: 'agent started' };
    await codexTurn({ ...CODEX, input: [...CODEX.input, { type: 'function_call', call_id: call.call_id, name: call.name, namespace: call.namespace, arguments: call.arguments }, output] });
    expect(lastSent(cloud).messages.slice(-2)).toEqual([
      { role: 'assistant', content: null, tool_calls: [{ id: 'call_spawn', type: 'function', function: { name: 'multi_agent_v1__spawn_agent', arguments: '{"message":"look"}' } }] },
      { role: 'tool', tool_call_id: 'call_spawn', content: 'agent started' },
    ]);
  });

  it("the turn without the sub-agent tools ([agents] enabled = false): the conversation and Codex's function tools as chat's, nothing of the Responses dialect", async () => {
    const final = await codexTurn(CODEX_WITHOUT_AGENTS);
    expect(final).toMatchObject({ status: 'completed', model: 'mana/reasoning' });
    const sent = lastSent(cloud);
    expect(sent.messages.map((m: Json) => m.role)).toEqual(['system', 'system', 'user', 'user', 'assistant', 'tool']);
    expect(sent.messages.slice(-2)).toEqual([
      { role: 'assistant', content: 'Let me run it.', tool_calls: [{ id: 'call_echo', type: 'function', function: { name: 'exec_command', arguments: '{"cmd":"echo hello"}' } }] },
      { role: 'tool', tool_call_id: 'call_echo', content: CODEX.input[6].output },
    ]);
    expect(sent.tools).toEqual(
      CODEX_WITHOUT_AGENTS.tools.map((t: Json) => ({ type: 'function', function: { name: t.name, description: t.description, parameters: t.parameters, strict: false } })),
    );
    expect(sent).toMatchObject({ model: 'm1', stream: true, tool_choice: 'auto', parallel_tool_calls: true });
    for (const field of ['include', 'store', 'client_metadata', 'prompt_cache_key', 'reasoning', 'reasoning_effort', 'input']) expect(sent, field).not.toHaveProperty(field);
  });
});

/**
 * The scripted upstream of an agent loop, for both dialects the fakes speak
 * (OpenAI chat, Anthropic Messages): each turn is chosen from the
 * conversation the client sent, so requests a CLI makes on the side (titles,
 * quota checks) do not use up a step. With the client's tools in the
 * request, the answer is a call to the next step's tool (one of the client's
 * own, found by name), counted by the tool results already in the
 * conversation; after the last step, the marker, but only when every tool's
 * output (`expect`) came back in those results.
 */
import type { FakeBehavior, FakeScript } from '@mana/llm-testkit';

export interface AgentStep {
  /** The client's tool to call: the first of these names its request offers. */
  readonly tools: readonly string[];
  readonly input: Record<string, unknown>;
  /** Text the tool's result must hold (e.g. the file's content, the command's output). */
  readonly expect: string;
}

type Json = Record<string, unknown>;

/** `chat`: an OpenAI chat body; `messages`: an Anthropic Messages body. */
export function agentScript(dialect: 'chat' | 'messages', steps: readonly AgentStep[], marker: string): FakeScript {
  return (raw: unknown): FakeBehavior => {
    const body = (raw ?? {}) as Json;
    const offered = toolNames(body, dialect);
    const messages = Array.isArray(body.messages) ? (body.messages as Json[]) : [];
    if (offered.length === 0) return { kind: 'answer', content: 'Agent test', chunks: 1 };
    const results = toolResults(messages, dialect);
    const step = steps[results.length];
    if (step !== undefined) {
      const name = step.tools.find((t) => offered.includes(t));
      if (name === undefined) return { kind: 'answer', content: `none of ${step.tools.join(', ')} offered (got ${offered.join(', ')})`, chunks: 1 };
      return { kind: 'answer', toolCalls: [{ id: `call_step_${results.length}`, function: { name, arguments: JSON.stringify(step.input) } }], chunks: 1 };
    }
    const missing = steps.filter((s, i) => !(results[i] ?? '').includes(s.expect)).map((s) => s.expect);
    return { kind: 'answer', content: missing.length === 0 ? `Done: ${marker}` : `tool results lacked ${missing.join(', ')}`, chunks: 2 };
  };
}

function toolNames(body: Json, dialect: 'chat' | 'messages'): string[] {
  const tools = Array.isArray(body.tools) ? (body.tools as Json[]) : [];
  return tools.map((t) => (dialect === 'chat' ? (t.function as Json | undefined)?.name : t.name)).filter((n): n is string => typeof n === 'string');
}

/** The text of each tool result in the conversation, oldest first. */
function toolResults(messages: readonly Json[], dialect: 'chat' | 'messages'): string[] {
  const out: string[] = [];
  for (const m of messages) {
    if (dialect === 'chat') {
      if (m.role === 'tool') out.push(JSON.stringify(m.content));
    } else if (m.role === 'user' && Array.isArray(m.content)) {
      for (const block of m.content as Json[]) if (block.type === 'tool_result') out.push(JSON.stringify(block.content));
    }
  }
  return out;
}

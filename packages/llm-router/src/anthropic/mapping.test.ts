import { describe, expect, it } from 'vitest';
import { FINISH_REASON_BY_STOP_REASON, stopReasonOf } from './mapping.js';

describe('stop_reason ↔ finish_reason', () => {
  it('an answer that filled the context window is cut short: length, and max_tokens again on the way back', () => {
    expect(FINISH_REASON_BY_STOP_REASON.model_context_window_exceeded).toBe('length');
    expect(stopReasonOf(FINISH_REASON_BY_STOP_REASON.model_context_window_exceeded)).toBe('max_tokens');
  });

  it('every stop reason comes back as one that means the same to an Anthropic client', () => {
    const back = Object.fromEntries(Object.entries(FINISH_REASON_BY_STOP_REASON).map(([stop, finish]) => [stop, stopReasonOf(finish)]));
    expect(back).toEqual({
      end_turn: 'end_turn',
      // OpenAI's `stop` does not say which: the codec tells a matched stop sequence apart (message-parts.ts).
      stop_sequence: 'end_turn',
      pause_turn: 'end_turn',
      max_tokens: 'max_tokens',
      model_context_window_exceeded: 'max_tokens',
      tool_use: 'tool_use',
      refusal: 'refusal',
    });
  });
});

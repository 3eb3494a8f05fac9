/**
 * Named-event SSE (Anthropic's, OpenAI Responses') as the tests read it: each
 * frame's `event:` line and its parsed `data:`, checked to be exactly those
 * two lines.
 */
import { expect } from 'vitest';
import type { Json } from './harness.js';

export interface Frame {
  readonly event: string;
  readonly data: Json;
}

/** An SSE body as its frames: each `event:` line with its parsed `data:`. */
export async function frames(res: Response): Promise<Frame[]> {
  return framesOf(await res.text());
}

/** The frames of an SSE body's text. */
export function framesOf(text: string): Frame[] {
  return text
    .split('\n\n')
    .filter((f) => f.trim() !== '')
    .map((f) => {
      const [eventLine, dataLine, ...rest] = f.split('\n');
      expect(rest).toEqual([]);
      expect(eventLine).toMatch(/^event: /);
      expect(dataLine).toMatch(/^data: /);
      return { event: eventLine!.slice('event: '.length), data: JSON.parse(dataLine!.slice('data: '.length)) };
    });
}

/** The frames as `event` or `event index` (content block events), in order. */
export const sequence = (all: readonly Frame[]): string[] => all.map((f) => (typeof f.data.index === 'number' ? `${f.event} ${f.data.index}` : f.event));

/** A Responses stream's events (the frames' data), each frame's `event:` checked to name its data's `type`. */
export function responsesEvents(text: string): Json[] {
  return framesOf(text).map((f) => {
    expect(f.event).toBe(f.data.type);
    return f.data;
  });
}

/**
 * Anthropic's SSE as the e2e suites read it: each frame's `event:` line and
 * its parsed `data:`, checked to be exactly those two lines.
 */
import { expect } from 'vitest';
import type { Json } from './harness.js';

export interface Frame {
  readonly event: string;
  readonly data: Json;
}

/** An SSE body as its frames: each `event:` line with its parsed `data:`. */
export async function frames(res: Response): Promise<Frame[]> {
  const text = await res.text();
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

/** The request headers a routed API reads before its body: the media type and X-Mana-LLM-Priority. */
import type { Priority } from '@mana/llm-router';

/** `application/json`, `application/json; charset=utf-8`, `application/vnd.x+json`, or no Content-Type at all. */
export function isJsonContentType(header: string | undefined): boolean {
  if (header === undefined) return true;
  const semi = header.indexOf(';');
  const type = (semi === -1 ? header : header.slice(0, semi)).trim().toLowerCase();
  return type === 'application/json' || (type.startsWith('application/') && type.endsWith('+json'));
}

/** The priority asked for; undefined when not asked, null for a value that is neither. */
export function priorityOf(header: string | string[] | undefined): Priority | undefined | null {
  if (header === undefined) return undefined;
  if (header === 'background' || header === 'realtime') return header;
  return null;
}

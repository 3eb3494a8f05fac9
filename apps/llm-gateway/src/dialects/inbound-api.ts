/**
 * The inbound APIs a client's request can come through, declared once: the
 * value of `api` on the usage record, the request's log line and the request
 * metrics' `api` label. Each codec names its own (codec.ts), and
 * `/v1/messages/count_tokens` is one more (count-tokens.ts): it calls no
 * upstream, but is counted, recorded and logged like the others. A new
 * inbound API is one more entry here and one more route. (The usage store
 * keeps `api` as text, without a list of its own to keep in step.)
 */
import type { Operation } from '@mana/llm-router';
import type { Dialect } from './dialect.js';

export const INBOUND_APIS = ['chat_completions', 'embeddings', 'messages', 'responses', 'count_tokens'] as const;

export type InboundApi = (typeof INBOUND_APIS)[number];

/**
 * A route of an inbound API, as the server needs it before the handler runs:
 * its dialect (a refusal of the auth step is answered in it), and what names
 * its requests on the log line, the record, the metrics and the trace.
 */
export interface InboundRoute extends Dialect {
  /** The route, as the log line names it (`/v1/chat/completions`). */
  readonly path: string;
  readonly api: InboundApi;
  /**
   * What the router is asked for; it also picks the alias a request without
   * `model` gets. Absent on a route that calls no router (count_tokens): its
   * requests are not traced, since a trace is a request's routing (a SERVER
   * span over the upstream calls' CLIENT spans).
   */
  readonly operation?: Operation | undefined;
}

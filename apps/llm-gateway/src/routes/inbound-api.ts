/**
 * The inbound APIs a routed request can come through, declared once: the
 * value of `api` on the usage record, the request's log line and the request
 * metrics' `api` label. Each codec names its own (inbound-codec.ts); a new
 * inbound API is one more entry here and one more codec. (The usage store
 * keeps `api` as text, without a list of its own to keep in step.)
 */
export const INBOUND_APIS = ['chat_completions', 'embeddings', 'messages', 'responses'] as const;

export type InboundApi = (typeof INBOUND_APIS)[number];

/**
 * The inbound APIs a routed request can come through, declared once: the
 * value of `api` on the usage record, the request's log line and the request
 * metrics' `api` label. Each codec names its own (inbound-codec.ts); a new
 * inbound API (OpenAI Responses) is one more entry here and one more codec.
 */
export const INBOUND_APIS = ['chat_completions', 'embeddings', 'messages'] as const;

export type InboundApi = (typeof INBOUND_APIS)[number];

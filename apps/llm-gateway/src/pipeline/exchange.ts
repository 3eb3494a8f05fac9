/**
 * What one request of an inbound API (chat completions, embeddings, messages,
 * responses, count_tokens) learns on its way: its status and error code, the
 * model it asked for, the router's outcome, its tokens, when its head went
 * out, its trace and its key's slot. Which request it is, when it came and who
 * called are the Call's (call.ts), not copied here. When the call ends its
 * facts and the Call's become one record (finished-request.ts), which the
 * metrics, trace, usage record and log line take (finish-call.ts). What routing
 * did comes in one piece, the router's outcome; nothing here recounts it.
 */
import type { Priority, RequestOutcome, Usage } from '@mana/llm-router';
import type { KeyLease } from '../keys/key-concurrency.js';
import type { Headers } from '../http/respond.js';
import type { RequestTrace } from '../tracing/tracing.js';
import type { InboundRoute } from '../dialects/inbound-api.js';

/** Everything one request learns on its way, for the response head and its finished record. */
export class Exchange {
  status = 0;
  code: string | undefined = undefined;
  /** The model the body asked for, cut to 200 characters for the log line and record (see askedFor). */
  model: string | undefined = undefined;
  /** The alias the body named, as written (header-safe): for X-Mana-LLM-Alias and the log line of a request refused before routing. */
  namedAlias: string | undefined = undefined;
  stream = false;
  priority: Priority | undefined = undefined;
  /** What the router reported (on its result or its error); undefined before routing. */
  outcome: RequestOutcome | undefined = undefined;
  tokenUsage: Usage | undefined = undefined;
  ttfbAt: number | undefined = undefined;
  /** Its trace (the SERVER span the router's attempts go under); undefined while tracing is off. */
  trace: RequestTrace | undefined = undefined;
  /** Its slot of its service key's max_concurrency, while it holds one (released when it ends). */
  keyLease: KeyLease | undefined = undefined;

  /** Notes the model the body asked for (a client may send any length: the records keep 200 characters). */
  askedFor(model: string | undefined): void {
    this.model = model === undefined ? undefined : model.slice(0, 200);
  }

  constructor(
    /** The API it came through: its route and `api` name it on the log line, the record and the metrics. */
    readonly codec: Pick<InboundRoute, 'path' | 'api'>,
  ) {}

  /** The client went away: logged and counted as 499, never sent (nobody is there to read it). */
  clientClosed(): void {
    this.status = 499;
    this.code = 'client_closed_request';
  }

  /**
   * Adds the `X-Mana-LLM-*` headers, from the outcome as the router reported it
   * (the call writes them with its X-Request-Id, call.ts).
   */
  addRoutingHeaders(headers: Headers): void {
    const o = this.outcome;
    if (o === undefined) {
      if (this.namedAlias !== undefined) headers['x-mana-llm-alias'] = this.namedAlias;
      return;
    }
    if (o.alias !== undefined) headers['x-mana-llm-alias'] = o.alias;
    if (o.target !== undefined) headers['x-mana-llm-resolved'] = o.target;
    if (o.attempts.length > 0) headers['x-mana-llm-attempts'] = o.upstreamCalls;
  }
}

/**
 * POST /v1/embeddings (and /embeddings): OpenAI's embeddings on the routed
 * pipeline. The body is checked by validate-embeddings.ts (which never
 * asks for a stream); answers and errors are OpenAI's (openai-codec.ts).
 * The pipeline adds the alias's vector space (X-Mana-LLM-Embedding-Space).
 */
import { validateEmbeddingRequest } from './validate-embeddings.js';
import type { InboundCodec } from '../codec.js';
import { openAiCodec } from './openai-codec.js';

export const EMBEDDINGS: InboundCodec = openAiCodec('/v1/embeddings', 'embeddings', 'embedding', validateEmbeddingRequest);

/**
 * POST /v1/chat/completions (and /chat/completions): OpenAI's chat
 * completions on the routed pipeline. The body is checked by
 * http/validate-chat.ts; JSON answers, SSE streams and errors are OpenAI's
 * (openai-dialect.ts).
 */
import { validateChatRequest } from '../http/validate-chat.js';
import type { InboundCodec } from './inbound-codec.js';
import { openAiCodec } from './openai-dialect.js';

export const CHAT_COMPLETIONS: InboundCodec = openAiCodec('/v1/chat/completions', 'chat_completions', 'chat', validateChatRequest);

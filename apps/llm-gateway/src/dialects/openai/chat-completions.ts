/**
 * POST /v1/chat/completions (and /chat/completions): OpenAI's chat
 * completions on the routed pipeline. The body is checked by
 * validate-chat.ts; JSON answers, SSE streams and errors are OpenAI's
 * (openai-codec.ts).
 */
import { validateChatRequest } from './validate-chat.js';
import type { InboundCodec } from '../codec.js';
import { openAiCodec } from './openai-codec.js';

export const CHAT_COMPLETIONS: InboundCodec = openAiCodec('/v1/chat/completions', 'chat_completions', 'chat', validateChatRequest);

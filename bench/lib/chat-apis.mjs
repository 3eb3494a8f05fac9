// The APIs a benchmark client can send its one chat request through, declared
// once: the route, the body (the same prompt in each API's shape), how a
// complete stream ends and the key header each API's clients send. Chat
// completions is the baseline; every other API here is measured on our
// gateway beside it, in the same rounds, as the `client` it names (its
// added latency over chat completions is the cost of its translation).

const PROMPT = 'Say hello.';

export const CHAT_APIS = {
  chat_completions: {
    path: '/v1/chat/completions',
    body: (model, stream) => ({ model, stream, messages: [{ role: 'user', content: PROMPT }] }),
    streamEnd: 'data: [DONE]',
    auth: (key) => ({ authorization: `Bearer ${key}` }),
  },
  // Anthropic's Messages needs max_tokens; the answer is the same fake completion, translated.
  messages: {
    client: 'ours_messages',
    label: 'Messages API',
    path: '/v1/messages',
    body: (model, stream) => ({ model, max_tokens: 64, stream, messages: [{ role: 'user', content: PROMPT }] }),
    streamEnd: 'event: message_stop',
    auth: (key) => ({ 'x-api-key': key, 'anthropic-version': '2023-06-01' }),
  },
  // OpenAI's Responses API with a string input, as its SDK examples send one.
  responses: {
    client: 'ours_responses',
    label: 'Responses API',
    path: '/v1/responses',
    body: (model, stream) => ({ model, stream, input: PROMPT }),
    streamEnd: 'event: response.completed',
    auth: (key) => ({ authorization: `Bearer ${key}` }),
  },
};

/** The APIs measured beside chat completions, each with its name (`messages`, `responses`: the `--skip=` switch and the results' key). */
export const OTHER_APIS = Object.entries(CHAT_APIS)
  .filter(([name]) => name !== 'chat_completions')
  .map(([name, api]) => ({ name, ...api }));

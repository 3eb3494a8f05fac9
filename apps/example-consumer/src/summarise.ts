import { MANA_LLM } from '@mana/llm-aliases';
import type OpenAI from 'openai';
import { RESOLVED_HEADER } from './gateway-client.js';

export interface Summary {
  /** The model's answer. */
  text: string;
  /** The alias we asked for: always MANA_LLM.LONG_FORM here. */
  requested: typeof MANA_LLM.LONG_FORM;
  /** The provider model that answered (from X-Mana-LLM-Resolved), if the gateway said. */
  resolvedModel: string | undefined;
}

/**
 * Summarises `text` with the long-form alias. The alias, not a provider model, is
 * the only model name product code ever sends; `.withResponse()` exposes the
 * HTTP headers so we can log which model the gateway resolved it to.
 */
export async function summarise(client: OpenAI, text: string, signal?: AbortSignal): Promise<Summary> {
  const { data, response } = await client.chat.completions
    .create(
      {
        model: MANA_LLM.LONG_FORM,
        messages: [
          { role: 'system', content: 'Summarise the user text in three sentences.' },
          { role: 'user', content: text },
        ],
      },
      { signal },
    )
    .withResponse();
  return {
    text: data.choices[0]?.message.content ?? '',
    requested: MANA_LLM.LONG_FORM,
    resolvedModel: response.headers.get(RESOLVED_HEADER) ?? undefined,
  };
}

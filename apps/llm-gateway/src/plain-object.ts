/**
 * A JSON object (not null, not an array): the shape every request body and
 * config section is checked for. The router's one copy of the check, so the
 * gateway and the router cannot disagree about it.
 */
export { isPlainObject } from '@mana/llm-router';

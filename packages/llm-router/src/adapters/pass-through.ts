import type { AdapterCall } from './adapter.js';

/**
 * The caller's body for an upstream of the caller's own protocol (an
 * OpenAI-compatible one; Anthropic for a request written in its protocol): as the caller sent it,
 * with `model` set to the target's model and the members of `changes` set.
 *
 * When the caller's text is known (`call.bodyText`) and every changed member
 * other than `model` is absent from the body, the result is that text with the
 * model value replaced and the new members inserted after the opening brace:
 * no second serialisation of what may be a long prompt, and the upstream gets
 * the client's own bytes (numbers, escapes and key order as written). Otherwise
 * (a member to change is present, or no text) it is the body object with the
 * changes, for the adapter to serialise; the two mean the same JSON.
 */
export function passThrough(call: Pick<AdapterCall<object>, 'body' | 'bodyText' | 'target'>, changes: Readonly<Record<string, unknown>>): Record<string, unknown> | string {
  const source = call.bodyText;
  const model = call.target.model;
  if (source !== undefined) {
    let inserted = '';
    let spliceable = true;
    for (const key in changes) {
      // Present already (even as null): a second member of that name would be ambiguous.
      if (Object.hasOwn(call.body, key)) {
        spliceable = false;
        break;
      }
      inserted += `${JSON.stringify(key)}:${JSON.stringify(changes[key])},`;
    }
    if (spliceable) {
      const { text, modelStart, modelEnd } = source;
      const open = text.indexOf('{'); // the body is a JSON object: its first brace opens it
      return text.slice(0, open + 1) + inserted + text.slice(open + 1, modelStart) + JSON.stringify(model) + text.slice(modelEnd);
    }
  }
  return { ...call.body, model, ...changes };
}

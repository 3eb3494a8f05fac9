/** The key filter of the Requests and Errors pages: any key, or one key's id (the usage API's `key` parameter), shown by its name. */
import { useMemo } from 'preact/hooks';
import { filterableKeyIds, seenKeyIds, type KeyNames } from '../keys.js';
import { usePoll } from '../use-poll.js';

export function KeySelect({ value, onChange, names }: { value: string; onChange: (id: string) => void; names: KeyNames }) {
  const seen = usePoll((signal) => seenKeyIds(signal), null, []);
  // The chosen key stays an option even when the lists, loaded once, do not name it.
  const ids = useMemo(() => {
    const list = filterableKeyIds(names, seen.data ?? []);
    return value === '' || list.includes(value) ? list : [...list, value];
  }, [names, seen.data, value]);
  return (
    <label class="inline-field">
      Key
      <select value={value} onChange={(e) => onChange((e.target as HTMLSelectElement).value)}>
        <option value="">any</option>
        {ids.map((id) => (
          <option key={id} value={id}>
            {names.label(id)}
          </option>
        ))}
      </select>
    </label>
  );
}

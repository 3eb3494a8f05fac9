/** The key filter of the Requests and Errors pages: any key, or one key's id (the usage API's `key` parameter), shown by its name. */
import { useMemo } from 'preact/hooks';
import { filterableKeyIds, type KeyNames } from '../keys.js';
import { usePoll } from '../use-poll.js';

export function KeySelect({ value, onChange, names }: { value: string; onChange: (id: string) => void; names: KeyNames }) {
  const known = usePoll((signal) => filterableKeyIds(names, signal), null, [names]);
  // The chosen key stays an option even when the list, loaded once, does not name it.
  const ids = useMemo(() => {
    const list = known.data ?? [];
    return value === '' || list.includes(value) ? list : [...list, value];
  }, [known.data, value]);
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

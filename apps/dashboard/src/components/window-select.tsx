/** The time window select of the Overview and the Errors page (15 min, 1 h, 24 h, 7 d). */
import { WINDOWS, type Window } from '../usage-series.js';

export function windowById(id: string): Window {
  return WINDOWS.find((w) => w.id === id) ?? WINDOWS[1]!;
}

export function WindowSelect({ value, onChange }: { value: string; onChange: (id: string) => void }) {
  return (
    <label class="inline-field">
      Window{' '}
      <select value={value} onChange={(e) => onChange((e.target as HTMLSelectElement).value)}>
        {WINDOWS.map((w) => (
          <option key={w.id} value={w.id}>
            {w.label}
          </option>
        ))}
      </select>
    </label>
  );
}

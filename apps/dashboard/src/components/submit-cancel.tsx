/**
 * A form's two buttons: the action (`label`, `busyLabel` while it runs) and
 * Cancel, both disabled while the action runs so it can be neither sent twice
 * nor abandoned half-way.
 */
export function SubmitCancel({ label, busyLabel, busy, onCancel }: { label: string; busyLabel: string; busy: boolean; onCancel: () => void }) {
  return (
    <div class="form-buttons">
      <button type="submit" class="primary" disabled={busy}>
        {busy ? busyLabel : label}
      </button>
      <button type="button" onClick={onCancel} disabled={busy}>
        Cancel
      </button>
    </div>
  );
}

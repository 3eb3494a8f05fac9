/**
 * A question the user answers before an action that cannot be undone or that
 * changes a key for its service (delete, rotate): the browser's own modal
 * <dialog>, so focus stays inside it and Escape cancels. Its form never
 * submits (the CSP's `form-action 'none'`): the confirm button runs the action.
 */
import type { ComponentChildren } from 'preact';
import { useEffect, useRef } from 'preact/hooks';
import type { ApiError } from '../api.js';
import { ErrorNote } from './status.js';
import { SubmitCancel } from './submit-cancel.js';

export function ConfirmDialog({
  title,
  confirmLabel,
  busy,
  error,
  onConfirm,
  onCancel,
  children,
}: {
  title: string;
  confirmLabel: string;
  busy: boolean;
  error: ApiError | undefined;
  onConfirm: () => void;
  onCancel: () => void;
  children: ComponentChildren;
}) {
  const dialog = useRef<HTMLDialogElement>(null);
  const onCancelRef = useRef(onCancel);
  onCancelRef.current = onCancel;
  useEffect(() => {
    const element = dialog.current;
    if (element === null) return;
    element.showModal();
    // Escape, or the dialog closed any other way than by its buttons.
    const closed = (): void => onCancelRef.current();
    element.addEventListener('close', closed);
    return () => {
      element.removeEventListener('close', closed);
      element.close();
    };
  }, []);
  return (
    <dialog ref={dialog} class="confirm" aria-labelledby="confirm-title">
      <form
        onSubmit={(e) => {
          e.preventDefault();
          onConfirm();
        }}
      >
        <h2 id="confirm-title">{title}</h2>
        {children}
        <ErrorNote error={error} />
        <SubmitCancel label={confirmLabel} busyLabel={`${confirmLabel}…`} busy={busy} onCancel={onCancel} />
      </form>
    </dialog>
  );
}

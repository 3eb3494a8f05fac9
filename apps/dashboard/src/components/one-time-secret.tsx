/**
 * A key's secret, the one time the gateway shows it (the answer of a create
 * or a rotation): with a copy button and a plain "shown once" note. The
 * secret lives only in the props of this panel: the page drops it when the
 * panel is dismissed or the page is left, and it is never put in a URL,
 * storage or a form the browser might remember.
 */
import { useEffect, useRef, useState } from 'preact/hooks';

export function OneTimeSecret({ title, secret, detail, onDone }: { title: string; secret: string; detail?: string; onDone: () => void }) {
  const [copied, setCopied] = useState<'copied' | 'select' | undefined>(undefined);
  const heading = useRef<HTMLHeadingElement>(null);
  const field = useRef<HTMLInputElement>(null);
  // Focus goes to the panel, so a keyboard or screen reader user lands on the secret's news.
  useEffect(() => heading.current?.focus(), []);

  const copy = async (): Promise<void> => {
    try {
      await navigator.clipboard.writeText(secret);
      setCopied('copied');
    } catch {
      // No clipboard access (a permission refused): select it for Ctrl+C instead.
      field.current?.select();
      setCopied('select');
    }
  };

  return (
    <section class="card one-time-secret" aria-labelledby="one-time-secret-title">
      <h2 id="one-time-secret-title" tabIndex={-1} ref={heading}>
        {title}
      </h2>
      <p>
        <strong>This key is shown once.</strong> Copy it now into the service's secrets: the gateway keeps only a digest of it and
        cannot show it again. A lost key can only be rotated.
      </p>
      {detail !== undefined && <p class="muted small">{detail}</p>}
      <div class="secret-row">
        <label for="one-time-secret-value" class="visually-hidden">
          The new key
        </label>
        <input id="one-time-secret-value" ref={field} readOnly value={secret} autoComplete="off" spellcheck={false} onFocus={(e) => (e.target as HTMLInputElement).select()} />
        <button type="button" onClick={() => void copy()}>
          Copy
        </button>
      </div>
      <p class="muted small" role="status">
        {copied === 'copied' ? 'Copied to the clipboard.' : copied === 'select' ? 'The browser refused the clipboard: the key is selected, press Ctrl+C (⌘C).' : ''}
      </p>
      <button type="button" class="primary" onClick={onDone}>
        Done: I have copied it
      </button>
    </section>
  );
}

/**
 * The shell: sign-in with the admin key (kept in sessionStorage for this tab
 * only), navigation between the pages (hash routes, so the gateway serves one
 * index.html), and the health poll that the header and Overview share.
 */
import { useEffect, useRef, useState } from 'preact/hooks';
import { ApiError, call, get } from './api.js';
import { Badge } from './components/status.js';
import { AliasesPage } from './pages/aliases.js';
import { ErrorsPage } from './pages/errors.js';
import { HistoryPage } from './pages/history.js';
import { KeysPage } from './pages/keys.js';
import { LIVE_REFRESH_MS, OverviewPage } from './pages/overview.js';
import { ProvidersPage } from './pages/providers.js';
import { RequestsPage } from './pages/requests.js';
import { adminKey, forgetAdminKey, keepAdminKey } from './session.js';
import type { HealthAnswer } from './types.js';
import { usePoll } from './use-poll.js';

const PAGES = [
  { hash: '#/', label: 'Overview' },
  { hash: '#/aliases', label: 'Aliases' },
  { hash: '#/providers', label: 'Providers' },
  { hash: '#/keys', label: 'Keys' },
  { hash: '#/requests', label: 'Requests' },
  { hash: '#/errors', label: 'Errors' },
  { hash: '#/history', label: 'Config history' },
] as const;

function useHash(): [string, (hash: string) => void] {
  const [hash, setHash] = useState(location.hash || '#/');
  useEffect(() => {
    const onChange = (): void => setHash(location.hash || '#/');
    addEventListener('hashchange', onChange);
    return () => removeEventListener('hashchange', onChange);
  }, []);
  return [hash, (next: string) => void (location.hash = next)];
}

function SignIn({ onSignedIn }: { onSignedIn: () => void }) {
  const [key, setKey] = useState('');
  const [error, setError] = useState<string | undefined>(undefined);
  const [busy, setBusy] = useState(false);
  const submit = async (event: Event): Promise<void> => {
    event.preventDefault();
    setBusy(true);
    setError(undefined);
    try {
      await call('/admin/config', { key: key.trim() });
      keepAdminKey(key.trim());
      onSignedIn();
    } catch (e) {
      setError(e instanceof ApiError ? e.message : String(e));
    } finally {
      setBusy(false);
    }
  };
  return (
    <main class="sign-in">
      <form class="card" onSubmit={(e) => void submit(e)} aria-labelledby="sign-in-title">
        <h1 id="sign-in-title">Mana LLM gateway</h1>
        <p class="muted">Sign in with the gateway's admin key (MANA_LLM_ADMIN_KEY). It is kept for this browser tab only.</p>
        <div class="field">
          <label for="admin-key">Admin key</label>
          <input id="admin-key" type="password" autoComplete="current-password" value={key} onInput={(e) => setKey((e.target as HTMLInputElement).value)} aria-invalid={error !== undefined} aria-describedby="sign-in-error" required />
          {error !== undefined && (
            <p class="field-error" id="sign-in-error" role="alert">
              {error}
            </p>
          )}
        </div>
        <button type="submit" class="primary" disabled={busy || key.trim() === ''}>
          {busy ? 'Signing in…' : 'Sign in'}
        </button>
      </form>
    </main>
  );
}

function Dashboard({ onSignOut }: { onSignOut: () => void }) {
  const [hash, navigate] = useHash();
  const health = usePoll((signal) => get<HealthAnswer>('/v1/health', signal), LIVE_REFRESH_MS, []);
  const page = PAGES.find((p) => p.hash !== '#/' && (hash === p.hash || hash.startsWith(`${p.hash}/`))) ?? PAGES[0];

  const firstPage = useRef(true);
  useEffect(() => {
    // After a page change (not on load, where the skip link comes first), move focus to the
    // content so keyboard and screen reader users start there.
    if (firstPage.current) firstPage.current = false;
    else document.getElementById('main')?.focus({ preventScroll: true });
  }, [page.hash]);
  useEffect(() => {
    if (health.error?.status === 401 || health.error?.code === 'invalid_admin_key') onSignOut();
  }, [health.error, onSignOut]);

  const aliasPath = hash.startsWith('#/aliases/') ? hash.slice('#/aliases/'.length) : '';
  let content;
  switch (page.hash) {
    case '#/aliases':
      content = <AliasesPage isNew={aliasPath === 'new'} editName={aliasPath.startsWith('edit/') ? decodeURIComponent(aliasPath.slice('edit/'.length)) : undefined} navigate={navigate} />;
      break;
    case '#/providers':
      content = <ProvidersPage health={health} />;
      break;
    case '#/keys':
      content = <KeysPage />;
      break;
    case '#/requests':
      content = <RequestsPage />;
      break;
    case '#/errors':
      content = <ErrorsPage />;
      break;
    case '#/history':
      content = <HistoryPage />;
      break;
    default:
      content = <OverviewPage health={health} />;
  }
  const status = health.data?.status;
  return (
    <>
      <a class="skip-link" href="#main">
        Skip to content
      </a>
      <header class="top">
        <span class="brand">Mana LLM gateway</span>
        <nav aria-label="Dashboard pages">
          <ul>
            {PAGES.map((p) => (
              <li key={p.hash}>
                <a href={p.hash} aria-current={p.hash === page.hash ? 'page' : undefined}>
                  {p.label}
                </a>
              </li>
            ))}
          </ul>
        </nav>
        <span class="top-right">
          {status !== undefined && (
            <Badge tone={status === 'ok' ? 'good' : status === 'degraded' ? 'warn' : 'bad'} title="Gateway status from /v1/health">
              {status}
            </Badge>
          )}
          <button type="button" onClick={onSignOut}>
            Sign out
          </button>
        </span>
      </header>
      <main id="main" tabIndex={-1}>
        {content}
      </main>
    </>
  );
}

export function App() {
  const [signedIn, setSignedIn] = useState(adminKey() !== null);
  if (!signedIn) return <SignIn onSignedIn={() => setSignedIn(true)} />;
  return (
    <Dashboard
      onSignOut={() => {
        forgetAdminKey();
        setSignedIn(false);
      }}
    />
  );
}

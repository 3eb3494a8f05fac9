/**
 * Providers: configuration (never a key: only whether one is set and which
 * variable it comes from), health, last check, last error, and "probe now".
 */
import { useState } from 'preact/hooks';
import { ApiError, call, get } from '../api.js';
import { Badge, ErrorNote, ProviderStatus } from '../components/status.js';
import { formatTime, relativeTime } from '../format.js';
import type { AdminProvider, HealthAnswer } from '../types.js';
import { usePoll, type Polled } from '../use-poll.js';

export function ProvidersPage({ health }: { health: Polled<HealthAnswer> }) {
  const providers = usePoll((signal) => get<{ data: AdminProvider[] }>('/admin/providers', signal), null, []);
  const [probing, setProbing] = useState(false);
  const [probeError, setProbeError] = useState<ApiError | undefined>(undefined);
  const [probedAt, setProbedAt] = useState<number | undefined>(undefined);

  const probe = async (): Promise<void> => {
    setProbing(true);
    setProbeError(undefined);
    try {
      await call('/admin/health/probe', { method: 'POST' });
      setProbedAt(Date.now());
      health.refresh();
    } catch (error) {
      if (error instanceof ApiError) setProbeError(error);
      else throw error;
    } finally {
      setProbing(false);
    }
  };

  const byName = new Map((health.data?.providers ?? []).map((p) => [p.provider, p]));
  return (
    <section aria-labelledby="providers-title">
      <div class="page-head">
        <h1 id="providers-title">Providers</h1>
        <button type="button" class="primary" onClick={() => void probe()} disabled={probing}>
          {probing ? 'Probing…' : 'Probe now'}
        </button>
      </div>
      <p class="muted small" role="status">
        {probedAt !== undefined ? `Probed every configured provider at ${formatTime(new Date(probedAt).toISOString())}.` : 'Probe now checks every configured provider at once.'}
      </p>
      <ErrorNote error={probeError} />
      <ErrorNote error={providers.error ?? health.error} />
      <div class="table-wrap">
        <table>
          <caption class="visually-hidden">Providers, their configuration and health</caption>
          <thead>
            <tr>
              <th scope="col">Provider</th>
              <th scope="col">Type · base URL</th>
              <th scope="col">API key</th>
              <th scope="col">Health</th>
              <th scope="col">Last check</th>
              <th scope="col">Used by</th>
            </tr>
          </thead>
          <tbody>
            {(providers.data?.data ?? []).map((p) => {
              const h = byName.get(p.name);
              return (
                <tr key={p.name} data-provider={p.name}>
                  <th scope="row">
                    {p.name}
                    {p.built_in && <span class="muted small"> built-in</span>}
                  </th>
                  <td>
                    {p.type ?? '–'}
                    <br />
                    <span class="muted small break">{p.base_url ?? '–'}</span>
                  </td>
                  <td>
                    {p.api_key_set ? <Badge tone="good">set</Badge> : <Badge tone={p.api_key_required ? 'warn' : 'muted'}>{p.api_key_required ? 'not set' : 'none needed'}</Badge>}
                    {p.api_key_env !== null && <span class="muted small"> from {p.api_key_env}</span>}
                  </td>
                  <td>{h === undefined ? '–' : <ProviderStatus health={h} />}</td>
                  <td>
                    {h?.last_check ? (
                      <time dateTime={h.last_check} title={h.last_check}>
                        {relativeTime(h.last_check)}
                      </time>
                    ) : (
                      'never'
                    )}
                    {h !== undefined && h.consecutive_failures > 0 && <span class="muted small"> · {h.consecutive_failures} failed in a row</span>}
                  </td>
                  <td>{p.used_by.length === 0 ? <span class="muted">no alias</span> : p.used_by.join(', ')}</td>
                </tr>
              );
            })}
          </tbody>
        </table>
      </div>
    </section>
  );
}

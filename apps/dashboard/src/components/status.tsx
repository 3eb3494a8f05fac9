/**
 * A state as a word and a colour (never colour alone: the word is what a
 * screen reader and a colour-blind reader get).
 */
import type { ComponentChildren } from 'preact';
import { relativeTime } from '../format.js';
import type { LiveTarget, ProviderHealth } from '../types.js';

export type Tone = 'good' | 'bad' | 'warn' | 'muted';

export function Badge({ tone, children, title }: { tone: Tone; children: ComponentChildren; title?: string }) {
  return (
    <span class={`badge badge-${tone}`} title={title}>
      {children}
    </span>
  );
}

/** A provider's health as the Overview and Providers pages show it. */
export function providerStatus(p: ProviderHealth, now = Date.now()): { tone: Tone; text: string; detail: string | null } {
  if (!p.configured) return { tone: 'muted', text: 'unconfigured', detail: p.unconfigured_reason };
  if (p.healthy === null) return { tone: 'muted', text: 'not checked yet', detail: null };
  if (p.healthy) return { tone: 'good', text: 'healthy', detail: null };
  const until = p.unhealthy_until !== null && new Date(p.unhealthy_until).getTime() > now ? ` until ${relativeTime(p.unhealthy_until, now).replace(/^in /, '')} from now` : '';
  return { tone: 'bad', text: `unhealthy${until}`, detail: p.last_error };
}

export function ProviderStatus({ health }: { health: ProviderHealth }) {
  const s = providerStatus(health);
  return (
    <span class="status">
      <Badge tone={s.tone}>{s.text}</Badge>
      {s.detail !== null && <span class="status-detail">{s.detail}</span>}
    </span>
  );
}

const TARGET_TONES: Record<LiveTarget['state'], Tone> = {
  healthy: 'good',
  unhealthy: 'bad',
  cooling_down: 'warn',
  unconfigured: 'muted',
  model_missing: 'warn',
};

/** A chain target's live state (healthy / unhealthy until … / cooling down / unconfigured + reason / model missing). */
export function TargetStatus({ target }: { target: LiveTarget }) {
  const words = target.state.replace('_', ' ');
  const until = target.until !== null && (target.state === 'unhealthy' || target.state === 'cooling_down') ? ` (retried ${relativeTime(target.until)})` : '';
  return (
    <span class="status">
      <Badge tone={TARGET_TONES[target.state]}>{words + until}</Badge>
      {target.reason !== null && target.state !== 'healthy' && <span class="status-detail">{target.reason}</span>}
    </span>
  );
}

/**
 * A chain target's load: `saturated` while it is full (realtime requests pass
 * it by), its count against its `max_concurrency`, its `rpm` / `tpm` windows used, and its recent time to
 * first token — what shows a busy local box before anything fails.
 */
export function TargetLoad({ target }: { target: LiveTarget }) {
  const load = target.load;
  const parts: string[] = [];
  if (load !== undefined) parts.push(`in flight ${load.in_flight}/${load.limit}${load.queued > 0 ? `, ${load.queued} queued` : ''}`);
  for (const w of target.rate ?? []) parts.push(`${w.unit} ${w.used}/${w.limit}`);
  if (target.first_token_ms !== null) parts.push(`first token ${target.first_token_ms} ms`);
  if (parts.length === 0) return null;
  return (
    <span class="status target-load">
      {(load?.saturated === true || target.rate?.some((w) => w.saturated) === true) && <Badge tone="warn">saturated</Badge>}
      <span class="status-detail">{parts.join(' · ')}</span>
    </span>
  );
}

export function ErrorNote({ error }: { error: { message: string; code?: string } | undefined }) {
  if (error === undefined) return null;
  return (
    <p class="error-note" role="alert">
      {error.message}
      {error.code !== undefined && error.code !== 'error' && <code class="code"> {error.code}</code>}
    </p>
  );
}

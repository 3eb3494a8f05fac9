/** How numbers, times and states read on the page. */

export function formatInt(n: number): string {
  return n.toLocaleString('en-US');
}

export function formatMs(ms: number | null | undefined): string {
  if (ms === null || ms === undefined) return '–';
  return ms < 10 ? `${ms.toFixed(1)} ms` : ms < 10_000 ? `${Math.round(ms)} ms` : `${(ms / 1000).toFixed(1)} s`;
}

export function formatUsd(usd: number | null | undefined): string {
  if (usd === null || usd === undefined) return 'unknown';
  return usd === 0 ? '$0' : usd < 0.01 ? `$${usd.toPrecision(2)}` : `$${usd.toFixed(2)}`;
}

/** `14:03:22` today, `Nov 30 14:03` on another day. */
export function formatTime(iso: string | null | undefined, now = Date.now()): string {
  if (!iso) return '–';
  const date = new Date(iso);
  const sameDay = new Date(now).toDateString() === date.toDateString();
  return sameDay
    ? date.toLocaleTimeString('en-GB', { hour12: false })
    : `${date.toLocaleDateString('en-US', { month: 'short', day: 'numeric' })} ${date.toLocaleTimeString('en-GB', { hour: '2-digit', minute: '2-digit', hour12: false })}`;
}

/** `May 6, 2031, 07:08`: a time that may be far off (an expiry), so with its year. */
export function formatDateTime(iso: string | null | undefined): string {
  if (!iso) return '–';
  return new Date(iso).toLocaleString('en-US', { year: 'numeric', month: 'short', day: 'numeric', hour: '2-digit', minute: '2-digit', hour12: false });
}

/** `in 25 s`, `3 min ago`. */
export function relativeTime(iso: string | null | undefined, now = Date.now()): string {
  if (!iso) return '–';
  const seconds = Math.round((new Date(iso).getTime() - now) / 1000);
  const abs = Math.abs(seconds);
  const text = abs < 60 ? `${abs} s` : abs < 3600 ? `${Math.round(abs / 60)} min` : abs < 86_400 ? `${Math.round(abs / 3600)} h` : `${Math.round(abs / 86_400)} d`;
  return seconds >= 0 ? `in ${text}` : `${text} ago`;
}

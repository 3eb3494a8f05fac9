// Readings from a running gateway's own /metrics.

/** The value of a counter without labels on a gateway's /metrics; 0 when it has no such line. */
export async function counterValue(url, name) {
  const text = await (await fetch(`${url}/metrics`)).text();
  const line = text.split('\n').find((l) => l.startsWith(`${name} `));
  return Number(line?.slice(name.length + 1) ?? 0);
}

/**
 * Usage events the gateway dropped since it started: recording that falls
 * behind drops events (counted, never waits), and a run that dropped them did
 * less work than its throughput claims.
 */
export function usageEventsDropped(url) {
  return counterValue(url, 'mana_llm_usage_events_dropped_total');
}

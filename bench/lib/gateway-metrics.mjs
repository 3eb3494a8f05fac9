// Readings from a running gateway's own /metrics.

/**
 * Usage events the gateway dropped since it started: recording that falls
 * behind drops events (counted, never waits), and a run that dropped them did
 * less work than its throughput claims.
 */
export async function usageEventsDropped(url) {
  const text = await (await fetch(`${url}/metrics`)).text();
  return Number(/^mana_llm_usage_events_dropped_total (\S+)$/m.exec(text)?.[1] ?? 0);
}

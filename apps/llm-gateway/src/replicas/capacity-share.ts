/**
 * The rule that splits a provider's capacity (`max_concurrency`, `rpm`, `tpm`)
 * between replicas: each live replica takes floor(total / replicas alive), at
 * least 1. The count comes from the shared state's membership (a heartbeat,
 * and a notification on each join and clean leave); it is read on every check
 * the router makes, so a join or leave applies from the next request.
 */
import type { RouterOptions } from '@mana/llm-router';

export function replicaShare(aliveReplicas: () => number): NonNullable<RouterOptions['capacityShare']> {
  return (total) => Math.max(1, Math.floor(total / Math.max(1, aliveReplicas())));
}

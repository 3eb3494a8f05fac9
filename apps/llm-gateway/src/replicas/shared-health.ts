/**
 * Health and cooldowns shared between replicas: the router announces each of
 * its own transitions to the SharedState (which only queues), and transitions
 * other replicas announce are applied to the router's local cache. Requests
 * read that cache alone, as with one replica.
 */
import type { Router } from '@mana/llm-router';
import { SharedState, type SharedStateStatus } from '@mana/llm-shared-state';
import type { Logger } from '../logging.js';

export interface SharedHealthOptions {
  readonly url: string;
  readonly router: Pick<Router, 'observeHealthTransitions' | 'applyHealthTransition'>;
  readonly logger: Logger;
  /** This replica's name (`--replica-name`, else `<hostname>:<port>`). */
  readonly replica: string;
}

export function createSharedState(options: SharedHealthOptions): SharedState {
  const { router, logger } = options;
  const shared = new SharedState({
    url: options.url,
    replica: options.replica,
    applyTransition: (transition) => router.applyHealthTransition(transition),
    onApplied: ({ transition: t, replica }) => {
      if (t.kind === 'provider_healthy') logger.info({ provider: t.subject, healthy: true, from: replica }, 'provider healthy (seen by another replica)');
      else if (t.kind === 'provider_unhealthy') logger.warn({ provider: t.subject, healthy: false, reason: t.reason, until: new Date(t.until).toISOString(), from: replica }, 'provider unhealthy (seen by another replica)');
      else logger.info({ target: t.subject, reason: t.reason, until: new Date(t.until).toISOString(), from: replica }, 'target cooling down (seen by another replica)');
    },
    onStateChange: (status) => logState(logger, status),
    onReplicasChange: (alive) => logger.info({ replicas: alive }, 'replicas alive changed: each takes its share of the providers\' capacities'),
    // At most once a minute (the SharedState's interval): anyone who can connect to PostgreSQL can send these.
    onRejected: ({ dropped, problem }) => logger.warn({ dropped, problem }, 'shared state: dropped notifications or rows that failed their checks (not from a replica of this version?)'),
  });
  router.observeHealthTransitions((transition) => shared.publish(transition));
  return shared;
}

function logState(logger: Logger, status: SharedStateStatus): void {
  if (status.state === 'ok') logger.info({ replica: status.replica, pending: status.pending }, 'shared state in sync with the other replicas');
  else logger.warn({ replica: status.replica, error: status.lastError }, 'shared state degraded: PostgreSQL cannot be reached; requests go on with this replica\'s own health state');
}

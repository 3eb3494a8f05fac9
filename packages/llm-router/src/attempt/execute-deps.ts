import type { Adapter } from '../adapters/adapter.js';
import type { HealthCheck } from '../health/health-cache.js';
import type { ConcurrencyBook } from '../load/concurrency.js';
import type { RateBook } from '../load/rate-window.js';
import type { AttemptEvent, ProviderConfig, ProviderType, Settings, TargetConfig } from '../types.js';
import type { BackgroundGate, InFlight } from './background-gate.js';
import type { SchemaChecker } from './schema-checker.js';

// The attempt loop's collaborators in a file of their own: execute.ts and
// call-target.ts both take them, and neither has to import the other for it.

/** The part of HealthCache the attempt loop uses (reads the pre-check, reports outcomes). */
export interface AttemptHealth {
  /** `until`: when the target is usable again (the later of overlapping blocks); Retry-After is the soonest of these. */
  check(target: TargetConfig, provider: ProviderConfig | undefined): HealthCheck;
  reportSuccess(provider: string): void;
  reportFailure(provider: string, error: string, settings: Settings): void;
  coolDown(targetId: string, untilMs: number, reason: string): void;
}

/** Long-lived collaborators, owned by the router and shared by all requests. */
export interface ExecuteDeps {
  readonly health: AttemptHealth;
  readonly adapters: { get(type: ProviderType): Adapter | undefined };
  readonly now: () => number;
  readonly random: () => number;
  /** The next round_robin counter value of an alias (increments it). */
  readonly rotation: (alias: string) => number;
  readonly inFlight: InFlight;
  /** `max_concurrency` slots and their FIFO queues (only targets that declare a limit touch it). */
  readonly concurrency: ConcurrencyBook;
  /** `rpm` / `tpm` windows and their FIFO queues (only targets that declare a rate touch it). */
  readonly rates: RateBook;
  readonly gate: BackgroundGate;
  /** Checks a provider out of band now (joins a check already running); its result goes to the health cache. */
  readonly probe: (provider: ProviderConfig) => void;
  /** Where response schemas are compiled and answers checked against them (off the event loop). */
  readonly schemas: SchemaChecker;
  /** The attempt-event sink, or undefined when nobody listens (then no event objects are built). */
  readonly attemptListener: () => ((event: AttemptEvent) => void) | undefined;
}

/** What a strategy may look at besides the alias itself. Everything is injected so plans are pure and testable. */
export interface PlanContext {
  /** Uniform random number in [0, 1) (Math.random in production, a seeded PRNG in tests). */
  readonly random: () => number;
  /** The round_robin counter of this alias: how many requests it has planned before. */
  readonly rotation: number;
  /** Requests currently running against a target id in this process. */
  readonly inFlight: (targetId: string) => number;
}

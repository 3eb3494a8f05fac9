/**
 * The alias strategies (`strategy:` in the config), in the order the docs and
 * the dashboard's alias form list them. A module without imports, exported on
 * its own (`@mana/llm-router/strategies`), so the dashboard bundles this list
 * and nothing else of the router.
 */
export const STRATEGIES = ['failover', 'round_robin', 'weighted', 'least_busy'] as const;

export type Strategy = (typeof STRATEGIES)[number];

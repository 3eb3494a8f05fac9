/**
 * The stable id of a chain target: derived from the alias and the target
 * (`provider/model`), so it is the same after a restart or a reload and needs
 * no storage. A chain lists a target at most once, so the pair is unique.
 * LiteLLM clients use it as the deployment id (`model_info.id`).
 */
import { createHash } from 'node:crypto';

export function targetId(alias: string, target: string): string {
  return createHash('sha256').update(`${alias}\u0000${target}`).digest('hex').slice(0, 24);
}

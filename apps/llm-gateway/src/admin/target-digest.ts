/**
 * The stable digest of a chain target: a SHA-256 of the alias and the target
 * (`provider/model`, what `TargetConfig.id` holds), so it is the same after a
 * restart or a reload and needs no storage. A chain lists a target at most
 * once, so the pair is unique. The admin API shows it as a chain entry's `id`;
 * LiteLLM clients use it as the deployment id (`model_info.id`).
 */
import { createHash } from 'node:crypto';

export function targetDigest(alias: string, target: string): string {
  return createHash('sha256').update(`${alias}\u0000${target}`).digest('hex').slice(0, 24);
}

import { noAttempts, RouterError } from '../errors.js';
import type { AliasConfig, ConfigSnapshot, Operation } from '../types.js';

/**
 * An alias asked for the other kind of work: a chat alias for embeddings, or
 * the reverse. The router names kinds, not the caller's routes: `aliasKind`
 * lets a caller say where that kind is served in its own protocol (the
 * gateway names its HTTP paths).
 */
export function kindMismatch(snapshot: ConfigSnapshot, config: AliasConfig, wanted: Operation, alias: string | undefined): RouterError {
  const fitting = [...snapshot.aliases.values()].filter((a) => a.kind === wanted).map((a) => a.name);
  return new RouterError(
    'alias_kind_mismatch',
    `${config.name} is ${article(config.kind)} alias, not ${article(wanted)} one` +
      ` (${wanted} aliases: ${fitting.length === 0 ? 'none configured' : fitting.join(', ')})`,
    { knownAliases: fitting, outcome: noAttempts(alias), param: 'model', aliasKind: config.kind },
  );
}

function article(kind: Operation): string {
  return kind === 'embedding' ? 'an embedding' : 'a chat';
}

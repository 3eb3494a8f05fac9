import type { AliasKind } from '../types.js';
import type { ConfigPath } from './config-source.js';
import type { ConfigReader, RawMap } from './reader.js';

/**
 * The one-vector-space rule. Vectors from two different embedding models live in
 * different spaces: a "failover" from one model to another would write vectors
 * into an index that cannot compare them, and nobody would notice until search
 * quality collapsed. So every target of an `embedding` alias must declare the
 * same `embedding_space` (once on the alias, or on each target), and the loader
 * refuses anything else, naming file, line and alias.
 */

/** What one chain entry declares about embeddings (`embedding_space`, `max_batch`). */
export interface TargetEmbedding {
  readonly space: string | undefined;
  readonly maxBatch: number | undefined;
  /** Where the entry is, to point at the one that disagrees. */
  readonly path: ConfigPath;
  /** The target id as error messages show it. */
  readonly id: string;
}

/** `embedding_space` / `max_batch` of an alias map or a chain entry map (absent → undefined). */
export function readEmbeddingKeys(reader: ConfigReader, map: RawMap, path: ConfigPath, alias: string): { space: string | undefined; maxBatch: number | undefined } {
  let space: string | undefined;
  if (map.embedding_space !== undefined && map.embedding_space !== null) {
    // Sent in X-Mana-LLM-Embedding-Space and shown in /v1/aliases: taken as written, never expanded.
    space = reader.identifier(map.embedding_space, [...path, 'embedding_space'], 'embedding_space', alias).trim();
    if (space === '') reader.fail([...path, 'embedding_space'], 'embedding_space must not be empty', alias);
  }
  const maxBatch =
    map.max_batch === undefined || map.max_batch === null ? undefined : reader.count(map.max_batch, [...path, 'max_batch'], 'max_batch', 1, alias);
  return { space, maxBatch };
}

/**
 * Checks an alias's embedding keys against its kind and returns the alias's one
 * space and batch limit. A chat alias may not carry them (it would suggest a
 * rule that is not enforced there).
 */
export function settleEmbeddingSpace(
  reader: ConfigReader,
  alias: string,
  kind: AliasKind,
  aliasPath: ConfigPath,
  aliasLevel: { space: string | undefined; maxBatch: number | undefined },
  targets: readonly TargetEmbedding[],
): { embeddingSpace: string | undefined; maxBatch: number | undefined } {
  if (kind === 'chat') {
    if (aliasLevel.space !== undefined) reader.fail([...aliasPath, 'embedding_space'], 'embedding_space needs kind: embedding', alias, true);
    if (aliasLevel.maxBatch !== undefined) reader.fail([...aliasPath, 'max_batch'], 'max_batch needs kind: embedding', alias, true);
    for (const t of targets) {
      if (t.space !== undefined) reader.fail([...t.path, 'embedding_space'], `embedding_space on target ${t.id} needs kind: embedding on the alias`, alias, true);
      if (t.maxBatch !== undefined) reader.fail([...t.path, 'max_batch'], `max_batch on target ${t.id} needs kind: embedding on the alias`, alias, true);
    }
    return { embeddingSpace: undefined, maxBatch: undefined };
  }
  let space = aliasLevel.space;
  let first: TargetEmbedding | undefined;
  for (const t of targets) {
    const own = t.space ?? aliasLevel.space;
    if (own === undefined) {
      reader.fail(t.path, `target ${t.id} of embedding alias ${alias} declares no embedding_space (set it once on the alias or on every target)`, alias);
    }
    if (space === undefined) {
      space = own;
      first = t;
    } else if (own !== space) {
      const other = first === undefined ? `the alias's embedding_space "${space}"` : `"${space}" of ${first.id}`;
      reader.fail(
        t.space === undefined ? t.path : [...t.path, 'embedding_space'],
        `target ${t.id} serves embedding_space "${own}", not ${other}: every target of an embedding alias must serve the same vector space, or failover would mix vectors of different models`,
        alias,
      );
    }
  }
  // The smallest stated limit: a batch one target could not take would fail when failover reaches it.
  let maxBatch = aliasLevel.maxBatch;
  for (const t of targets) if (t.maxBatch !== undefined && (maxBatch === undefined || t.maxBatch < maxBatch)) maxBatch = t.maxBatch;
  return { embeddingSpace: space, maxBatch };
}

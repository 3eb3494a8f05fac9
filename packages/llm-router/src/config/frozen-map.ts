/**
 * A Map that refuses writes after construction. A ConfigSnapshot is shared by
 * every in-flight request and swapped by reference on reload, so nothing may
 * mutate it in place.
 */
export class FrozenMap<K, V> extends Map<K, V> {
  constructor(entries: Iterable<readonly [K, V]>) {
    super();
    for (const [key, value] of entries) super.set(key, value);
    Object.freeze(this);
  }

  override set(): this {
    throw new TypeError('config snapshots are immutable');
  }

  override delete(): boolean {
    throw new TypeError('config snapshots are immutable');
  }

  override clear(): void {
    throw new TypeError('config snapshots are immutable');
  }
}

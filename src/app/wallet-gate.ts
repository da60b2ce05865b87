/**
 * One wallet payment of a partner at a time in this process, from its booking to its commit.
 * The wallet row lock already orders payments across instances; this keeps the others of this
 * process waiting here, for free, rather than as PostgreSQL backends queued on the row, which
 * under a hot wallet burned more server CPU than the payments themselves.
 */
export class KeyedGate {
  readonly #tails = new Map<string, Promise<void>>();

  /** Resolves, once every earlier holder of `key` released it, with this holder's release. */
  async acquire(key: string): Promise<() => void> {
    const before = this.#tails.get(key);
    let release!: () => void;
    const mine = new Promise<void>((r) => (release = r));
    const tail = before ? before.then(() => mine) : mine;
    this.#tails.set(key, tail);
    if (before) await before;
    return () => {
      release();
      if (this.#tails.get(key) === tail) this.#tails.delete(key);
    };
  }
}

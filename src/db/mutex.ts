/**
 * A FIFO async mutex. PGlite is one session: every user of it (Kysely, pg-boss) must hold this
 * lock for the whole of a connection's use, or one task's statements land in another's
 * open transaction.
 */
export class Mutex {
  private tail: Promise<void> = Promise.resolve();

  /** Resolves with a release function once the lock is held. */
  acquire(): Promise<() => void> {
    let release!: () => void;
    const held = new Promise<void>((resolve) => (release = resolve));
    const ready = this.tail.then(() => release);
    this.tail = this.tail.then(() => held);
    return ready;
  }

  async run<T>(fn: () => Promise<T>): Promise<T> {
    const release = await this.acquire();
    try {
      return await fn();
    } finally {
      release();
    }
  }
}

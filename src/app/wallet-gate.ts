/** One job's result, or what failed it alone. */
export type Settled<R> = { ok: true; value: R } | { ok: false; error: unknown };

/**
 * The wallet payments of one partner in this process, run a batch at a time: the first of a quiet
 * key runs at once and alone; those that arrive while a batch runs wait here and then run together
 * as the next batch, at most `max` of them, in arrival order. Keys run alongside each other.
 *
 * The wallet row lock already orders payments across instances; this keeps the others of this
 * process waiting here, for free, rather than as PostgreSQL backends queued on the row, which under
 * a hot wallet burned more server CPU than the payments themselves. And a batch is one statement,
 * one round trip and one commit (src/app/pay-from-wallet.ts): one payment at a time costs a round
 * trip and a commit (one WAL flush) a payment, which bounds a hot wallet (decision 0026).
 *
 * `run` answers one result per job, in order; if it throws, every job of the batch fails with it.
 */
export class KeyedBatches<J, R> {
  readonly #waiting = new Map<string, Waiter<J, R>[]>();

  private readonly run: (key: string, jobs: J[]) => Promise<Settled<R>[]>;
  private readonly max: number;

  constructor(run: (key: string, jobs: J[]) => Promise<Settled<R>[]>, max = 50) {
    this.run = run;
    this.max = max;
  }

  submit(key: string, job: J): Promise<R> {
    return new Promise<R>((resolve, reject) => {
      const waiter = { job, resolve, reject };
      const waiting = this.#waiting.get(key);
      if (waiting) {
        waiting.push(waiter);
        return;
      }
      this.#waiting.set(key, []);
      void this.#drain(key, [waiter]);
    });
  }

  async #drain(key: string, first: Waiter<J, R>[]): Promise<void> {
    const waiting = this.#waiting.get(key)!;
    for (let batch = first; batch.length > 0; batch = waiting.splice(0, this.max)) {
      let results: Settled<R>[];
      try {
        results = await this.run(
          key,
          batch.map((w) => w.job),
        );
      } catch (err) {
        results = batch.map(() => ({ ok: false, error: err }));
      }
      batch.forEach((w, i) => {
        const r = results[i] ?? { ok: false, error: new Error('a batch answered fewer results than jobs') };
        if (r.ok) w.resolve(r.value);
        else w.reject(r.error);
      });
    }
    this.#waiting.delete(key);
  }
}

interface Waiter<J, R> {
  job: J;
  resolve: (value: R) => void;
  reject: (err: unknown) => void;
}

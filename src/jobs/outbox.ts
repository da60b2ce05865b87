import { isDatabaseUnavailable } from '../db/availability.ts';
import type { Logger } from 'pino';

/** How often the outbox is looked at without a kick: rows another process queued and left (it died). */
const POLL_MS = 1000;
/**
 * How long a kick waits for more rows before it dispatches. Dispatched at once, a batch held only
 * the row that kicked it, and a dispatch is a transaction of four round trips: nearly one dispatch
 * per payment or issued order (decision 0024). The wait is small beside the latency a paid order's
 * webhook is allowed.
 */
const GATHER_MS = 25;

/**
 * When jobs are created from an outbox table: the issue-order jobs of paid orders from the issuance
 * outbox (migration 13; app/issuance-queue.ts), the first deliver-webhook job of an issued order's
 * event from the webhook outbox (migration 14; app/webhook-events.ts). A transaction queues a row;
 * this process is kicked once it commits and dispatches until the outbox is empty. Under load the
 * rows that commit while a dispatch runs make up the next batch, so a job costs a few rows of one
 * statement instead of a pg-boss insert (a statement and a round trip) inside every transaction.
 *
 * Every process runs one of each, web-only ones too (WORKERS=false): a row is dispatched by the
 * process that queued it, and a row a process left behind (it died between commit and dispatch) is
 * found by the next poll of any process. At worst its job comes a second later.
 */
export class Outbox {
  private running: Promise<void> | undefined;
  private again = false;
  private stopped = false;
  private timer: NodeJS.Timeout | undefined;
  /** Called after a drain that created jobs (see {@link onDispatched}). */
  private dispatched: () => void = () => {};

  /**
   * `dispatch` creates the jobs of up to `batch` queued rows and says how many it took; `name`
   * names the outbox in the log. A kick waits `gatherMs` before it dispatches, so that the rows
   * committed meanwhile go in the same batch.
   */
  private readonly name: string;
  private readonly dispatch: () => Promise<number>;
  private readonly batch: number;
  private readonly log: Logger;
  private readonly gatherMs: number;

  constructor(
    name: string,
    dispatch: () => Promise<number>,
    batch: number,
    log: Logger,
    gatherMs = GATHER_MS,
  ) {
    this.name = name;
    this.dispatch = dispatch;
    this.batch = batch;
    this.log = log;
    this.gatherMs = gatherMs;
  }

  start(): void {
    this.schedule();
  }

  /**
   * Called once after each drain that created jobs: the service wakes its own workers of them,
   * which would otherwise find them at their next poll (up to half a second later, for each
   * stage an order goes through).
   */
  onDispatched(listener: () => void): void {
    this.dispatched = listener;
  }

  /** A row was queued and its transaction has committed: create its job soon. */
  kick(): void {
    if (this.stopped) return;
    if (this.running) {
      this.again = true;
      return;
    }
    this.running = this.drain().finally(() => {
      this.running = undefined;
      if (this.again) this.kick();
    });
  }

  /**
   * Creates the jobs of everything queued now; for tests and for a graceful stop. Rows a drain under
   * way has taken are skipped by this dispatch, so that drain is waited for too.
   */
  async flush(): Promise<void> {
    for (;;) {
      await this.running;
      while ((await this.dispatch()) === this.batch);
      if (!this.running) return;
    }
  }

  /** Stops polling; what is queued is dispatched first, so a clean stop leaves nothing behind. */
  async stop(): Promise<void> {
    this.stopped = true;
    clearTimeout(this.timer);
    await this.running;
    await this.flush().catch((err: unknown) =>
      this.log.warn({ err }, `${this.name} outbox not flushed at stop`),
    );
  }

  private schedule(): void {
    if (this.stopped) return;
    this.timer = setTimeout(() => {
      this.kick();
      this.schedule();
    }, POLL_MS);
    this.timer.unref();
  }

  private async drain(): Promise<void> {
    if (this.gatherMs > 0) await new Promise((r) => setTimeout(r, this.gatherMs));
    this.again = false;
    let created = 0;
    try {
      for (;;) {
        if (this.stopped) break;
        const n = await this.dispatch();
        created += n;
        if (n !== this.batch) break;
      }
    } catch (err) {
      // The rows stay queued (the transaction rolled back): the next kick or poll tries again. A
      // database away is said once by its health watch, not every second here (decision 0050).
      this.log[isDatabaseUnavailable(err) ? 'debug' : 'error'](
        { err },
        `${this.name} outbox dispatch failed`,
      );
    }
    if (created > 0) this.dispatched();
  }
}

import type { Logger } from 'pino';
import { ISSUANCE_BATCH } from '../app/issuance-queue.ts';

/** How often the outbox is looked at without a kick: rows another process queued and left (it died). */
const POLL_MS = 1000;

/**
 * When the issue-order jobs of paid orders are created from the issuance outbox (migration 13; the
 * dispatch itself is app/issuance-queue.ts). A payment queues its order in the statement or
 * transaction that marks it paid; this process is kicked once it commits and dispatches until the
 * outbox is empty. Under load the payments that commit while a dispatch runs make up the next
 * batch, so a job costs a few rows of one statement instead of a statement and a round trip inside
 * every payment.
 *
 * Every process runs one, web-only ones too (WORKERS=false): a payment's job is created by the
 * process that took it, and a row a process left behind (it died between commit and dispatch) is
 * found by the next poll of any process. The order is paid either way; at worst its job comes a
 * second later.
 */
export class IssuanceOutbox {
  private running: Promise<void> | undefined;
  private again = false;
  private stopped = false;
  private timer: NodeJS.Timeout | undefined;

  /** `dispatch` creates the jobs of up to a batch of queued orders and says how many it took. */
  constructor(
    private readonly dispatch: () => Promise<number>,
    private readonly log: Logger,
  ) {}

  start(): void {
    this.schedule();
  }

  /** An order was queued and its transaction has committed: create its job soon. */
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
      while ((await this.dispatch()) === ISSUANCE_BATCH);
      if (!this.running) return;
    }
  }

  /** Stops polling; what is queued is dispatched first, so a clean stop leaves nothing behind. */
  async stop(): Promise<void> {
    this.stopped = true;
    clearTimeout(this.timer);
    await this.running;
    await this.flush().catch((err: unknown) => this.log.warn({ err }, 'issuance outbox not flushed at stop'));
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
    this.again = false;
    try {
      while (!this.stopped && (await this.dispatch()) === ISSUANCE_BATCH);
    } catch (err) {
      // The rows stay queued (the transaction rolled back): the next kick or poll tries again.
      this.log.error({ err }, 'issuance outbox dispatch failed');
    }
  }
}

import type { Job, PgBoss } from 'pg-boss';
import { isDatabaseUnavailable } from '../db/availability.ts';
import type { Logger } from 'pino';

/** A deliver-webhook job: an automatic attempt of the event, or a re-send its partner asked for. */
export interface DeliveryJob {
  eventId: string;
  resend?: boolean;
}

export interface DispatcherOptions {
  /** Deliveries in flight on this instance. */
  maxInFlight: number;
  /** Deliveries in flight to one partner across every instance (pg-boss group concurrency). */
  perPartner: number;
  pollingIntervalMs: number;
  /** How long a freed slot waits for others before the fetch that fills them (default 5 ms). */
  gatherMs?: number;
}

/**
 * Runs the deliver-webhook jobs without letting one slow endpoint hold the others back. pg-boss's
 * batch workers settle a batch together, so one receiver timing out after 10 s would hold every
 * delivery fetched with it. Here each job is settled on its own as soon as its attempt ends, a new
 * fetch fills every freed slot, and a partner's jobs are grouped so that its endpoint occupies at
 * most `perPartner` slots of the whole service: a partner whose endpoint hangs delays only itself.
 */
export class WebhookDispatcher {
  private inFlight = 0;
  private stopped = false;
  private fetching = false;
  /** A slot freed while a fetch was under way: fetch again as soon as it returns. */
  private again = false;
  private timer: NodeJS.Timeout | undefined;
  /** A fetch for the slots freed lately, due once they have gathered. */
  private gathering: NodeJS.Timeout | undefined;
  private readonly settled = new Set<Promise<void>>();
  /** Jobs done and waiting for the completion under way: the next statement completes them all. */
  private completing: { id: string; done: () => void; failed: (err: unknown) => void }[] = [];

  private readonly boss: PgBoss;
  private readonly queue: string;
  private readonly run: (job: Job<DeliveryJob>) => Promise<unknown>;
  private readonly log: Logger;
  private readonly opts: DispatcherOptions;

  constructor(
    boss: PgBoss,
    queue: string,
    run: (job: Job<DeliveryJob>) => Promise<unknown>,
    log: Logger,
    opts: DispatcherOptions,
  ) {
    this.boss = boss;
    this.queue = queue;
    this.run = run;
    this.log = log;
    this.opts = opts;
  }

  start(): void {
    void this.poll();
  }

  /** Jobs were just queued: fetch now, unless a fetch is due anyway (under way or gathering). */
  wake(): void {
    if (this.gathering) return;
    void this.poll();
  }

  /** No new jobs; waits for the attempts under way (each ends within its 10 s timeout). */
  async stop(): Promise<void> {
    this.stopped = true;
    clearTimeout(this.timer);
    clearTimeout(this.gathering);
    while (this.settled.size > 0 || this.fetching) {
      await Promise.all([...this.settled]);
      if (this.fetching) await new Promise((r) => setTimeout(r, 10));
    }
  }

  private async poll(): Promise<void> {
    clearTimeout(this.timer);
    if (this.fetching) this.again = true;
    if (this.stopped || this.fetching) return;
    this.again = false;
    const free = this.opts.maxInFlight - this.inFlight;
    if (free <= 0) return; // a settling job polls again
    this.fetching = true;
    let jobs: Job<DeliveryJob>[] = [];
    try {
      jobs = await this.boss.fetch<DeliveryJob>(this.queue, {
        batchSize: free,
        groupConcurrency: this.opts.perPartner,
      });
    } catch (err) {
      if (!this.stopped)
        this.log[isDatabaseUnavailable(err) ? 'debug' : 'error'](
          { err },
          'webhook dispatcher: fetching jobs failed',
        );
    } finally {
      this.fetching = false;
    }
    for (const job of jobs) this.begin(job);
    if (this.stopped) return;
    // A full fetch suggests more are waiting, and a slot freed meanwhile may have a job: ask again
    // at once; otherwise after the interval.
    if ((jobs.length > 0 && jobs.length === free) || this.again) void this.poll();
    else this.timer = setTimeout(() => void this.poll(), this.opts.pollingIntervalMs);
  }

  private begin(job: Job<DeliveryJob>): void {
    this.inFlight++;
    const done: Promise<void> = this.run(job)
      .then(
        () => this.complete(job.id),
        (err: Error) => this.boss.fail(this.queue, job.id, { message: err.message, stack: err.stack }),
      )
      .then(
        () => undefined,
        // The job stays active and expires: pg-boss retries it, and delivery is at least once.
        (err: unknown) =>
          this.log[isDatabaseUnavailable(err) ? 'debug' : 'error'](
            { err, jobId: job.id },
            'webhook dispatcher: settling a job failed',
          ),
      )
      .finally(() => {
        this.inFlight--;
        this.settled.delete(done);
        this.refill();
      });
    this.settled.add(done);
  }

  /**
   * A slot has freed: fetch for it and those that free meanwhile once they have gathered (5 ms), or
   * at once when nothing is in flight. Fetched the moment each slot freed, a fetch took one or two
   * jobs under load, and pg-boss's fetch with per-partner limits is planned afresh on every call.
   * The wait is short because a partner's next job can be fetched only after its slot frees: every
   * millisecond here bounds one partner's delivery rate (decision 0031).
   */
  private refill(): void {
    if (this.stopped || this.gathering) return;
    if (this.inFlight === 0) {
      void this.poll();
      return;
    }
    this.gathering = setTimeout(() => {
      this.gathering = undefined;
      void this.poll();
    }, this.gatherMs);
  }

  private get gatherMs(): number {
    return this.opts.gatherMs ?? 5;
  }

  /**
   * Completes the job with the others that finish meanwhile: at once when no completion is under
   * way, else by the next statement, as soon as the one under way returns (a group commit). The slot
   * frees once its job is completed, and a partner's next job can be fetched only then.
   */
  private complete(id: string): Promise<void> {
    return new Promise((done, failed) => {
      this.completing.push({ id, done, failed });
      if (!this.flushing) void this.flush();
    });
  }

  private flushing = false;

  private async flush(): Promise<void> {
    this.flushing = true;
    while (this.completing.length > 0) {
      const batch = this.completing;
      this.completing = [];
      try {
        await this.boss.complete(
          this.queue,
          batch.map((b) => b.id),
        );
        for (const b of batch) b.done();
      } catch (err) {
        for (const b of batch) b.failed(err);
      }
    }
    this.flushing = false;
  }
}

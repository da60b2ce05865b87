import type { Db } from '../db/database.ts';
import { addToWindows, dropWindowsBefore } from '../db/repos/rate-limits.ts';

interface Counter {
  /** Start of the fixed window (ms) this count belongs to. */
  window: number;
  /** Requests counted here and not yet added to the shared row. */
  pending: number;
  /** Requests being added to the shared row right now. */
  sending: number;
  /** The shared row's total (every instance) when this instance last added to it. */
  shared: number;
}

/** A key's count in the current window, every instance, and the ms until the window ends. */
export interface WindowCount {
  current: number;
  ttl: number;
}

/**
 * Request counts per key in fixed windows, shared by every instance on one database.
 *
 * A database round trip per request would cost get-offers most of its throughput, so each
 * instance counts in memory and adds its counts to one shared row per key and window a few times a
 * second (one statement for all keys), reading back the total of every instance. A request is
 * judged on that total plus what this instance counted since: instances see each other's requests
 * within `flushMs`, and a partner spread over N instances can overshoot its limit by at most what
 * N-1 instances take in that time.
 *
 * Counting answers at once, from memory: a limit is judged without a promise.
 */
export class SharedWindowCounter {
  private readonly counters = new Map<string, Counter>();
  private timer: NodeJS.Timeout | undefined;
  private flushing: Promise<void> | undefined;
  private lastSweep = 0;

  private readonly db: Db;
  private readonly opts: { flushMs?: number; now?: () => number; onError?: (err: unknown) => void };

  constructor(db: Db, opts: SharedWindowCounter['opts'] = {}) {
    this.db = db;
    this.opts = opts;
  }

  private now(): number {
    return this.opts.now?.() ?? Date.now();
  }

  /** Counts one request for `key`; answers the count in the current window, all instances. */
  incr(key: string, timeWindow: number): WindowCount {
    return this.count(key, timeWindow, 1);
  }

  /** The count without counting (failed signatures are judged before they are counted). */
  read(key: string, timeWindow: number): WindowCount {
    return this.count(key, timeWindow, 0);
  }

  /** The count of `key` in the current window, all instances, after adding `add` requests to it. */
  private count(key: string, timeWindow: number, add: 0 | 1): WindowCount {
    const now = this.now();
    const window = now - (now % timeWindow);
    const ttl = window + timeWindow - now;
    let c = this.counters.get(key);
    if (!c || c.window !== window) {
      if (!add) return { current: 0, ttl };
      c = { window, pending: 0, sending: 0, shared: 0 };
      this.counters.set(key, c);
    }
    if (add) {
      c.pending += add;
      this.schedule();
    }
    return { current: c.shared + c.sending + c.pending, ttl };
  }

  private schedule(): void {
    if (this.timer) return;
    this.timer = setTimeout(() => {
      this.timer = undefined;
      this.flushing = this.flush().catch((err) => this.opts.onError?.(err));
    }, this.opts.flushMs ?? 250);
    this.timer.unref();
  }

  /** Adds the pending counts to the shared rows and reads the totals back. */
  async flush(): Promise<void> {
    const byWindow = new Map<number, { key: string; count: number }[]>();
    for (const [key, c] of this.counters) {
      if (c.pending === 0) continue;
      const list = byWindow.get(c.window) ?? [];
      list.push({ key, count: c.pending });
      byWindow.set(c.window, list);
      c.sending = c.pending;
      c.pending = 0;
    }
    const now = this.now();
    for (const [window, increments] of byWindow) {
      let totals: Map<string, number>;
      try {
        totals = await addToWindows(this.db, new Date(window), increments);
      } catch (err) {
        // Counted again with the next flush: a lost write of the database is not a lost count.
        for (const { key } of increments) {
          const c = this.counters.get(key);
          if (c && c.window === window) [c.pending, c.sending] = [c.pending + c.sending, 0];
        }
        throw err;
      }
      for (const [key, total] of totals) {
        const c = this.counters.get(key);
        if (c && c.window === window) [c.shared, c.sending] = [total, 0];
      }
    }
    // Forget finished windows, here and (now and then) in the shared table.
    for (const [key, c] of this.counters)
      if (c.pending === 0 && now - c.window > 10 * 60_000) this.counters.delete(key);
    if (now - this.lastSweep > 60_000) {
      this.lastSweep = now;
      await dropWindowsBefore(this.db, new Date(now - 10 * 60_000));
    }
  }

  /** Stops the timer after a last flush (graceful stop). */
  async close(): Promise<void> {
    if (this.timer) clearTimeout(this.timer);
    this.timer = undefined;
    await this.flushing;
    await this.flush().catch(() => {});
  }
}

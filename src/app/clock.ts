import type { Db } from '../db/database.ts';
import { deleteSetting, getSetting, putSetting } from '../db/repos/settings.ts';

const KEY = 'sandbox_clock';

/**
 * The service clock. In the sandbox the operator can move it (PUT /admin/sandbox/clock); the
 * offset from real time is kept in the database so every instance on it reads the same time.
 * Instances re-read it at most every `ttlMs`; the instance that moved it sees the change at once.
 */
export class Clock {
  private offsetMs = 0;
  private loadedAt = Number.NEGATIVE_INFINITY;

  private readonly db: Db;
  private readonly sandbox: boolean;
  private readonly ttlMs: number;

  constructor(db: Db, sandbox: boolean, ttlMs = 1000) {
    this.db = db;
    this.sandbox = sandbox;
    this.ttlMs = ttlMs;
  }

  /** The time, ms; in the sandbox, the offset is re-read from the database once every `ttlMs`. */
  async now(): Promise<number> {
    if (!this.sandbox) return Date.now();
    const real = Date.now();
    if (real - this.loadedAt > this.ttlMs) {
      // Every request arriving while the offset is re-read waits for that one read: without this,
      // each expiry sent one query per request in flight.
      this.loading ??= this.load(real).finally(() => (this.loading = undefined));
      await this.loading;
      return Date.now() + this.offsetMs;
    }
    return real + this.offsetMs;
  }

  private loading: Promise<void> | undefined;

  /** Bumped by set/reset: a read that started before them must not put the old offset back. */
  private generation = 0;

  private async load(real: number): Promise<void> {
    const generation = this.generation;
    const stored = await getSetting<{ offset_ms: number }>(this.db, KEY);
    if (generation !== this.generation) return;
    this.offsetMs = stored?.offset_ms ?? 0;
    this.loadedAt = real;
  }

  async set(nowMs: number): Promise<void> {
    const offset = nowMs - Date.now();
    await putSetting(this.db, KEY, { offset_ms: offset }, new Date());
    this.generation++;
    this.offsetMs = offset;
    this.loadedAt = Date.now();
  }

  async reset(): Promise<void> {
    await deleteSetting(this.db, KEY);
    this.generation++;
    this.offsetMs = 0;
    this.loadedAt = Date.now();
  }
}

import pg from 'pg';

/**
 * Errors that say the database cannot be reached or cannot take a write right now, rather than that
 * a statement is wrong (decision 0050): the server is gone, restarting or starting (57P01–57P03), a
 * connection was refused, reset, timed out or lost (08xxx, socket errors), or it has no room
 * (53100 disk full, 53200 out of memory, 53300 too many connections). Everything else is a fault of
 * ours and stays an unexpected failure.
 */
export function isDatabaseUnavailable(err: unknown): boolean {
  for (let e = err, depth = 0; e && typeof e === 'object' && depth < 5; depth++) {
    const { code, message, syscall } = e as { code?: unknown; message?: unknown; syscall?: unknown };
    if (typeof code === 'string') {
      if (/^(57P0[123]|08[0-9A-Z]{3}|53[123]00)$/.test(code)) return true;
      if (SOCKET_ERRORS.has(code)) return true;
      // The embedded server's socket file is gone while it restarts (not any missing file).
      if (code === 'ENOENT' && syscall === 'connect') return true;
    }
    if (typeof message === 'string' && LOST.test(message)) return true;
    e = (e as { cause?: unknown }).cause;
  }
  return false;
}

const SOCKET_ERRORS = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'ECONNABORTED',
  'EPIPE',
  'ETIMEDOUT',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'EAI_AGAIN',
]);

/** pg's and pg-pool's own words for a session that died or never came. */
const LOST =
  /^(Connection terminated|Client has encountered a connection error|Client was closed|timeout exceeded when trying to connect|Connection terminated due to connection timeout|Query read timeout)/;

/** What /v1 answers while the database is away, and every other surface's message (decision 0050). */
export const unavailableMessage = (requestId: string): string =>
  `Service temporarily unavailable: the database cannot be reached; retry (request ${requestId})`;

/** Seconds a client is told to wait before it retries (Retry-After). */
export const RETRY_AFTER_SECONDS = 5;

/** How often the database is tried while it is away. */
const PROBE_MS = 500;
/** A probe gives up after this long: a server that accepts nothing must not hold the probe. */
const PROBE_TIMEOUT_MS = 2000;

export type Log = (message: string, level?: 'info' | 'warn') => void;

/**
 * What this process knows of its database: up, or away since when (decision 0050). Anything that
 * meets an unavailability error reports it here; the first report logs one warn line and starts a
 * probe on a connection of its own (not the pool's, whose waiters it would join) every half second;
 * the first probe that answers logs one line and marks it up again. Listeners hear both changes
 * (the idempotency keys let go late, the metrics).
 */
export class DatabaseHealth {
  private downSince: number | undefined;
  private lastOutOfRoom = 0;
  private timer: NodeJS.Timeout | undefined;
  private closed = false;
  private readonly listeners: ((up: boolean) => void)[] = [];
  private readonly connectionString: string;
  private readonly log: Log;

  constructor(connectionString: string, log: Log) {
    this.connectionString = connectionString;
    this.log = log;
  }

  get up(): boolean {
    return this.downSince === undefined;
  }

  onChange(listener: (up: boolean) => void): void {
    this.listeners.push(listener);
  }

  /** Reports an error; answers whether it was an unavailability (then the state is now down). */
  report(err: unknown): boolean {
    if (!isDatabaseUnavailable(err)) return false;
    this.markDown(err);
    return true;
  }

  markDown(err: unknown): void {
    if (this.closed || this.downSince !== undefined) return;
    // Out of room (a full disk, memory, connections): the server still answers, and reads go on.
    // Only writes fail, each answered as unavailable; the log says so once a minute, and the
    // server is not marked away (its probe would answer at once, and the state would flap).
    if (/^53/.test(String((err as { code?: unknown }).code))) {
      if (Date.now() - this.lastOutOfRoom > 60_000) {
        this.lastOutOfRoom = Date.now();
        this.log(
          `the database refuses writes for lack of room (${(err as Error).message}); ` +
            'answering them with Retry-After until it has room again',
          'warn',
        );
      }
      return;
    }
    this.downSince = Date.now();
    const e = err as { code?: string; message?: string };
    this.log(
      `the database cannot be reached (${[e.code, e.message].filter(Boolean).join(': ')}); ` +
        'answering requests that need it with Retry-After until it is back',
      'warn',
    );
    this.emit(false);
    this.schedule();
  }

  /** One round trip on a fresh connection, bounded; marks the state by its outcome. */
  async probe(): Promise<boolean> {
    const client = new pg.Client({
      connectionString: this.connectionString,
      connectionTimeoutMillis: PROBE_TIMEOUT_MS,
      query_timeout: PROBE_TIMEOUT_MS,
    });
    client.on('error', () => {});
    try {
      await client.connect();
      await client.query('select 1');
      this.markUp();
      return true;
    } catch (err) {
      if (isDatabaseUnavailable(err)) this.markDown(err);
      return false;
    } finally {
      await client.end().catch(() => {});
    }
  }

  close(): void {
    this.closed = true;
    clearTimeout(this.timer);
  }

  private markUp(): void {
    if (this.downSince === undefined) return;
    const away = (Date.now() - this.downSince) / 1000;
    this.downSince = undefined;
    clearTimeout(this.timer);
    this.log(`the database answers again, after ${away.toFixed(1)} s away`, 'warn');
    this.emit(true);
  }

  private schedule(): void {
    if (this.closed) return;
    this.timer = setTimeout(() => {
      void this.probe().then((up) => {
        if (!up) this.schedule();
      });
    }, PROBE_MS);
    this.timer.unref();
  }

  private emit(up: boolean): void {
    for (const l of this.listeners) {
      try {
        l(up);
      } catch {
        // A listener's failure is its own.
      }
    }
  }
}

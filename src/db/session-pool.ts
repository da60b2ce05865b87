import type { PostgresCursor, PostgresPool, PostgresPoolClient, PostgresQueryResult } from 'kysely';
import type pg from 'pg';

/**
 * The pool Kysely draws its connections from. Two things on top of pg's pool:
 *
 * Prepared statements. Kysely's pg driver sends every query unnamed, so PostgreSQL parses and plans
 * it on every call, a large share of the server's CPU on the payment path (decision 0023). With
 * `prepare`, a query text seen a second time goes as a
 * named prepared statement: parsed once per connection, and planned generically once PostgreSQL
 * finds that cheaper. At most `maxNames` texts are named; one-off texts (migrations) are not. A
 * prepared statement whose tables a later migration altered fails once with "cached plan must not
 * change result type" (0A000); that text then gets a fresh name, so the retry prepares again.
 *
 * A dead connection. When the server ends a pooled session (pg_terminate_backend, a restart, a
 * failover), the next statement on it fails. If that is the first statement of the checkout and
 * it cannot have changed anything (BEGIN, or a SELECT outside a transaction), it runs again on a
 * fresh connection, so the request does not fail for a session it never used. A failure later
 * in a transaction is not retried: the transaction is lost, and the caller sees the error.
 */
export function sessionPool(pool: pg.Pool, opts: { prepare: boolean; maxNames?: number }): PostgresPool {
  const maxNames = opts.maxNames ?? 500;
  const maxRetries = (pool.options.max ?? 10) + 1;
  const seen = new Set<string>();
  const names = new Map<string, string>();
  let next = 0;

  const nameFor = (text: string): string | undefined => {
    if (!opts.prepare) return undefined;
    const name = names.get(text);
    if (name !== undefined || names.size >= maxNames) return name;
    if (!seen.has(text)) {
      if (seen.size >= 10 * maxNames) seen.clear();
      seen.add(text);
      return undefined;
    }
    const fresh = `k${(next++).toString(36)}`;
    names.set(text, fresh);
    return fresh;
  };

  const send = async (client: pg.PoolClient, text: string, values: ReadonlyArray<unknown>) => {
    refuseInvalidDates(values);
    // No parameters: a statement the caller wants sent as a simple query (begin, commit, or
    // several statements in one message); never named.
    const name = values.length > 0 ? nameFor(text) : undefined;
    if (name === undefined) return client.query(text, values as unknown[]);
    try {
      return await client.query({ name, text, values: values as unknown[] });
    } catch (err) {
      if ((err as { code?: string }).code === '0A000' && names.get(text) === name) {
        names.set(text, `k${(next++).toString(36)}`);
      }
      throw err;
    }
  };

  return {
    async connect() {
      let client = await pool.connect();
      // A session that dies while checked out but between statements emits 'error' with nobody
      // listening (pg's pool listens only while it is idle), which would crash the process; the
      // next statement on it fails instead, and is retried or thrown as below.
      client.on('error', ignore);
      let first = true;
      let released = false;
      const run = async (text: string, values: ReadonlyArray<unknown>) => {
        const retry = first && isHarmless(text);
        first = false;
        // The session taken in place of a dead one can be dead too (a failover ends them all): each
        // dead one is destroyed and the next tried, until the pool, out of idle ones, opens a new one.
        for (let attempt = 1; ; attempt++) {
          try {
            return await send(client, text, values);
          } catch (err) {
            if (!retry || attempt > maxRetries || !isConnectionLost(err)) throw err;
            client.off('error', ignore);
            client.release(err as Error); // destroys it
            released = true;
            // No session to be had (the server is away): the caller's error, and nothing to release.
            client = await pool.connect();
            released = false;
            client.on('error', ignore);
          }
        }
      };
      // Kysely's client interface, whose cursor form this service never uses.
      function query<R>(sql: string, parameters: ReadonlyArray<unknown>): Promise<PostgresQueryResult<R>>;
      function query<R>(cursor: PostgresCursor<R>): PostgresCursor<R>;
      function query(
        sql: string | PostgresCursor<unknown>,
        parameters?: ReadonlyArray<unknown>,
      ): Promise<unknown> | PostgresCursor<unknown> {
        if (typeof sql !== 'string') throw new Error('session pool: cursors are not supported');
        return run(sql, parameters ?? []);
      }
      const pooled: PostgresPoolClient = {
        query,
        release: () => {
          if (released) return;
          released = true;
          client.off('error', ignore);
          client.release();
        },
      };
      return pooled;
    },
    end: () => pool.end(),
  };
}

/** The session is gone (terminated, server restarting, socket closed), not the statement at fault. */
export function isConnectionLost(err: unknown): boolean {
  const e = err as { code?: string; message?: string };
  if (e.code && /^(57P0[123]|08\d{3})$/.test(e.code)) return true;
  if (e.code === 'ECONNRESET' || e.code === 'EPIPE') return true;
  return /^(Connection terminated|Client has encountered a connection error|Client was closed)/.test(
    e.message ?? '',
  );
}

const ignore = () => {};

/**
 * An invalid Date (`new Date(NaN)`) as a parameter: pg would send it as text the server refuses,
 * with a deprecation warning that a later pg turns into an error. It is refused here instead,
 * before anything is sent, naming the parameter.
 */
function refuseInvalidDates(values: ReadonlyArray<unknown>): void {
  for (let i = 0; i < values.length; i++) {
    const v = values[i];
    if (v instanceof Date && Number.isNaN(v.getTime())) {
      throw new TypeError(`query parameter $${i + 1} is an invalid Date`);
    }
  }
}

const isHarmless = (text: string): boolean => /^\s*(begin|select)\b/i.test(text);

import type { PostgresPool, PostgresPoolClient } from 'kysely';
import type pg from 'pg';

/**
 * Kysely's pg driver sends every query unnamed, so PostgreSQL parses and plans it on every call:
 * on the payment path the planning alone cost 0.4 ms of server CPU a payment (pg_stat_statements,
 * track_planning). This pool hands Kysely clients whose repeated query texts go as named prepared
 * statements: parsed once per connection, and planned generically once PostgreSQL finds that
 * cheaper. A text is named the second time it is seen (one-off texts such as migrations are not),
 * and at most `maxNames` texts are; anything else goes unnamed as before.
 *
 * A prepared statement whose tables a later migration altered fails once with "cached plan must
 * not change result type" (0A000); that text then gets a fresh name, so the retry prepares again.
 */
export function preparingPool(pool: pg.Pool, maxNames = 500): PostgresPool {
  const seen = new Set<string>();
  const names = new Map<string, string>();
  let next = 0;

  const nameFor = (text: string): string | undefined => {
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

  const wrapped = new WeakMap<pg.PoolClient, PostgresPoolClient>();
  const wrap = (client: pg.PoolClient): PostgresPoolClient => {
    const query = async (text: string, values: ReadonlyArray<unknown>) => {
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
      query: query as unknown as PostgresPoolClient['query'],
      release: () => client.release(),
    };
  };

  return {
    async connect() {
      const client = await pool.connect();
      let w = wrapped.get(client);
      if (!w) wrapped.set(client, (w = wrap(client)));
      return w;
    },
    end: () => pool.end(),
  };
}

import {
  CompiledQuery,
  DummyDriver,
  Kysely,
  PostgresAdapter,
  PostgresIntrospector,
  PostgresQueryCompiler,
  type Compilable,
  type QueryResult,
} from 'kysely';
import type { DB, Db } from './schema.ts';

/** Builds and compiles, never connects. */
const compiler = new Kysely<DB>({
  dialect: {
    createAdapter: () => new PostgresAdapter(),
    createDriver: () => new DummyDriver(),
    createIntrospector: (db) => new PostgresIntrospector(db),
    createQueryCompiler: () => new PostgresQueryCompiler(),
  },
});

/** Stands for an argument while a statement is compiled: its parameter is looked up by name. */
class Slot {
  readonly name: string;
  constructor(name: string) {
    this.name = name;
  }
}

/**
 * A statement of the request path built with Kysely once and then only executed: building and
 * compiling it on every call was a measurable share of create-order's and confirm-order's CPU
 * (decision 0023), and the same SQL string each time also makes the session pool's lookup of its
 * prepared name cheap.
 *
 * `build` receives `args` whose values are placeholders: it must place them in the statement as
 * values (where, set, values, sql`${}`), never look into them. A statement whose shape depends on
 * the call (which columns are set, how many rows are inserted) gives the shape as `shape`: one
 * compilation per shape.
 */
export function compiledOnce<A extends Record<string, unknown>, R>(
  build: (db: Kysely<DB>, args: A, shape: string) => Compilable<R>,
): (conn: Db, args: A, shape?: string) => Promise<QueryResult<R>> {
  const shapes = new Map<string, { sql: string; parameters: readonly unknown[] }>();
  return (conn, args, shape = '') => {
    let compiled = shapes.get(shape);
    if (!compiled) {
      const slots = new Proxy({} as A, { get: (_, name) => new Slot(String(name)) });
      const { sql, parameters } = build(compiler, slots, shape).compile();
      compiled = { sql, parameters };
      shapes.set(shape, compiled);
    }
    const values = compiled.parameters.map((p) => (p instanceof Slot ? args[p.name] : p));
    return conn.executeQuery(CompiledQuery.raw(compiled.sql, values)) as Promise<QueryResult<R>>;
  };
}

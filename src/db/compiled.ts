import {
  CompiledQuery,
  DummyDriver,
  Kysely,
  PostgresAdapter,
  PostgresIntrospector,
  PostgresQueryCompiler,
  sql,
  type Compilable,
  type QueryResult,
  type RawBuilder,
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

/** What the compiled statement holds in place of the call's argument `name`, until a call binds it. */
class Placeholder {
  readonly name: string;
  constructor(name: string) {
    this.name = name;
  }
}

/**
 * `param('orderId')` is the call's argument `orderId` as a parameter of the statement (`$n`): an
 * expression the builder places (in where, set, values, sql`${}`), typed as the argument, with no
 * value to look into. A name that is not an argument does not compile.
 */
export type Param<A> = <K extends keyof A & string>(name: K) => RawBuilder<A[K]>;

/**
 * A statement of the request path built with Kysely once and then only executed: building and
 * compiling it on every call was a measurable share of create-order's and confirm-order's CPU
 * (decision 0023), and the same SQL string each time also makes the session pool's lookup of its
 * prepared name cheap.
 *
 * `build` places each argument with `param(name)`; the arguments' values are bound by name on each
 * call, and a call that lacks one throws. A statement whose shape depends on the call (which columns
 * are set, how many rows are inserted) gives the shape as `shape`: one compilation per shape.
 */
export function compiledOnce<A extends Record<string, unknown>, R>(
  build: (db: Kysely<DB>, param: Param<A>, shape: string) => Compilable<R>,
): (conn: Db, args: A, shape?: string) => Promise<QueryResult<R>> {
  const param: Param<A> = (name) => sql`${new Placeholder(name)}`;
  const shapes = new Map<string, { sql: string; parameters: readonly unknown[] }>();
  return (conn, args, shape = '') => {
    let compiled = shapes.get(shape);
    if (!compiled) {
      const { sql: text, parameters } = build(compiler, param, shape).compile();
      compiled = { sql: text, parameters };
      shapes.set(shape, compiled);
    }
    const values = compiled.parameters.map((p) => {
      if (!(p instanceof Placeholder)) return p;
      if (!(p.name in args)) throw new Error(`a compiled statement needs the argument ${p.name}`);
      return args[p.name];
    });
    return conn.executeQuery(CompiledQuery.raw(compiled.sql, values)) as Promise<QueryResult<R>>;
  };
}

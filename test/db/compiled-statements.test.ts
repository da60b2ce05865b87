import { sql, type CompiledQuery, type Kysely } from 'kysely';
import { describe, expect, it } from 'vitest';
import { compiledOnce, type Param } from '../../src/db/compiled.ts';
import type { DB } from '../../src/db/schema.ts';

/** A connection that records what it is asked to run. */
function recorder() {
  const ran: CompiledQuery[] = [];
  const conn = {
    executeQuery: async (q: CompiledQuery) => {
      ran.push(q);
      return { rows: [] };
    },
  } as unknown as Kysely<DB>;
  return { conn, ran };
}

describe('compiledOnce', () => {
  it('builds a statement once per shape and binds each call’s arguments by name, constants kept', async () => {
    let builds = 0;
    const find = compiledOnce((db, param: Param<{ id: string; partner: string }>, shape) => {
      builds++;
      const q = db
        .selectFrom('orders')
        .select('id')
        .where('id', '=', param('id'))
        .where('status', '=', 'draft')
        .where('partner_id', '=', param('partner'));
      return shape === 'lock' ? q.forUpdate() : q;
    });
    const { conn, ran } = recorder();
    await find(conn, { id: 'A', partner: 'p1' });
    await find(conn, { id: 'B', partner: 'p2' });
    await find(conn, { id: 'C', partner: 'p3' }, 'lock');
    expect(builds).toBe(2);
    expect(ran.map((q) => q.parameters)).toEqual([
      ['A', 'draft', 'p1'],
      ['B', 'draft', 'p2'],
      ['C', 'draft', 'p3'],
    ]);
    expect(ran[0]!.sql).toBe(ran[1]!.sql); // the same string: the session pool finds its name at once
    expect(ran[0]!.sql).toBe(
      'select "id" from "orders" where "id" = $1 and "status" = $2 and "partner_id" = $3',
    );
    expect(ran[2]!.sql).toBe(`${ran[0]!.sql} for update`);
  });

  it('places an argument only through param: a name that is no argument does not compile, a call without it throws', async () => {
    const find = compiledOnce((db, param: Param<{ id?: string }>) =>
      db
        .selectFrom('orders')
        .select('id')
        .where('id', '=', sql<string>`${param('id')}`),
    );
    compiledOnce((db, param: Param<{ id: string }>) =>
      // @ts-expect-error -- `partner` is not an argument of this statement
      db.selectFrom('orders').select('id').where('partner_id', '=', param('partner')),
    );
    const { conn, ran } = recorder();
    expect(() => find(conn, {})).toThrow('a compiled statement needs the argument id');
    await find(conn, { id: 'A' });
    expect(ran.map((q) => q.parameters)).toEqual([['A']]);
  });
});

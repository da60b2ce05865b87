import type { Selectable } from 'kysely';
import type { Db } from '../database.ts';
import type { OperatorRole, OperatorsTable } from '../schema.ts';

export type OperatorRow = Selectable<OperatorsTable>;

export async function insertOperator(
  db: Db,
  o: { id: string; name: string; role: OperatorRole; tokenSha256: string; at: Date },
): Promise<OperatorRow> {
  return db
    .insertInto('operators')
    .values({ id: o.id, name: o.name, role: o.role, token_sha256: o.tokenSha256, created_at: o.at })
    .returningAll()
    .executeTakeFirstOrThrow();
}

/** The enabled operator holding a token (by its SHA-256). */
export async function operatorByTokenHash(db: Db, tokenSha256: string): Promise<OperatorRow | undefined> {
  return db
    .selectFrom('operators')
    .selectAll()
    .where('token_sha256', '=', tokenSha256)
    .where('disabled_at', 'is', null)
    .executeTakeFirst();
}

export async function findOperator(db: Db, id: string): Promise<OperatorRow | undefined> {
  return db.selectFrom('operators').selectAll().where('id', '=', id).executeTakeFirst();
}

export async function listOperators(db: Db): Promise<OperatorRow[]> {
  return db.selectFrom('operators').selectAll().orderBy('created_at').orderBy('id').execute();
}

export async function disableOperator(db: Db, id: string, at: Date): Promise<OperatorRow | undefined> {
  return db
    .updateTable('operators')
    .set({ disabled_at: at })
    .where('id', '=', id)
    .where('disabled_at', 'is', null)
    .returningAll()
    .executeTakeFirst();
}

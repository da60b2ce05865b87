import type { Insertable, Selectable } from 'kysely';
import type { Db } from '../database.ts';
import type { OperatorsTable } from '../schema.ts';

export type OperatorRow = Selectable<OperatorsTable>;

export async function insertOperator(db: Db, operator: Insertable<OperatorsTable>): Promise<OperatorRow> {
  return db.insertInto('operators').values(operator).returningAll().executeTakeFirstOrThrow();
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

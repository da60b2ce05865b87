import type { Insertable, Selectable, Updateable } from 'kysely';
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

/**
 * Changes an enabled operator (its token, or disables it); undefined when no enabled operator has
 * this id. A new token's hash replaces the old, which opens nothing from then on.
 */
export async function changeEnabledOperator(
  db: Db,
  id: string,
  change: Pick<Updateable<OperatorsTable>, 'token_sha256' | 'disabled_at'>,
): Promise<OperatorRow | undefined> {
  return db
    .updateTable('operators')
    .set(change)
    .where('id', '=', id)
    .where('disabled_at', 'is', null)
    .returningAll()
    .executeTakeFirst();
}

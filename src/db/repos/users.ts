import { sql, type Insertable, type Selectable } from 'kysely';
import type { Db } from '../database.ts';
import type { PortalRole, PortalUsersTable } from '../schema.ts';

export type UserRow = Selectable<PortalUsersTable>;

/**
 * What a session or an invitation reads of its user (joined as `u`) and the user's partner (as `p`):
 * who, and whether either is disabled.
 */
export const USER_AND_PARTNER = [
  'u.id as user_id',
  'u.email',
  'u.role',
  'u.partner_id',
  'u.disabled_at',
  'u.language',
  'p.name as partner_name',
  'p.disabled as partner_disabled',
] as const;

/**
 * A partner's portal users (migration 16). Addresses are unique compared lowercased. A user inserted
 * without a `password_hash` is invited and has not joined yet.
 */
export async function insertUser(db: Db, user: Insertable<PortalUsersTable>): Promise<UserRow> {
  return db.insertInto('portal_users').values(user).returningAll().executeTakeFirstOrThrow();
}

/**
 * The user with this address (any case) at `partnerId`, or, without one, the user holding the address
 * (enabled, with a password) or else any with it; locked when `forUpdate`. One address may be
 * invited by several partners; one user at most holds it (migration 19).
 */
export async function findUserByEmail(
  db: Db,
  email: string,
  opts: { forUpdate?: boolean; partnerId?: string } = {},
): Promise<UserRow | undefined> {
  let q = db
    .selectFrom('portal_users')
    .selectAll()
    .where(sql<string>`lower(email)`, '=', email.toLowerCase());
  if (opts.partnerId !== undefined) q = q.where('partner_id', '=', opts.partnerId);
  q = q
    .orderBy(sql`password_hash is not null and disabled_at is null`, 'desc')
    .orderBy('created_at')
    .limit(1);
  return (opts.forUpdate ? q.forUpdate() : q).executeTakeFirst();
}

/**
 * The user and whether it and its partner are enabled, for signing in: the one holding the address,
 * else a disabled one that set a password (told it is disabled once its password is right).
 */
export async function findUserForSignIn(db: Db, email: string) {
  return db
    .selectFrom('portal_users as u')
    .innerJoin('partners as p', 'p.id', 'u.partner_id')
    .select(['u.password_hash', ...USER_AND_PARTNER])
    .where(sql<string>`lower(u.email)`, '=', email.toLowerCase())
    .where('u.password_hash', 'is not', null)
    .orderBy(sql`u.disabled_at is null`, 'desc')
    .orderBy('u.disabled_at', 'desc')
    .limit(1)
    .executeTakeFirst();
}

/** Whether another user holds the address: enabled, with a password (migration 19). */
export async function emailHeldElsewhere(db: Db, email: string, userId: string): Promise<boolean> {
  const row = await db
    .selectFrom('portal_users')
    .select('id')
    .where(sql<string>`lower(email)`, '=', email.toLowerCase())
    .where('password_hash', 'is not', null)
    .where('disabled_at', 'is', null)
    .where('id', '!=', userId)
    .executeTakeFirst();
  return row !== undefined;
}

/** A disabled user invited again by the operator: enabled, without a password until it accepts. */
export async function reopenUser(db: Db, id: string, role: PortalRole): Promise<void> {
  await db
    .updateTable('portal_users')
    .set({ role, password_hash: null, disabled_at: null })
    .where('id', '=', id)
    .execute();
}

export async function listPartnerUsers(db: Db, partnerId: string): Promise<UserRow[]> {
  return db
    .selectFrom('portal_users')
    .selectAll()
    .where('partner_id', '=', partnerId)
    .orderBy('created_at')
    .orderBy('id')
    .execute();
}

export async function setUserPassword(db: Db, id: string, passwordHash: string): Promise<void> {
  await db.updateTable('portal_users').set({ password_hash: passwordHash }).where('id', '=', id).execute();
}

/** A user invited again before accepting gets the role of the new invitation. */
export async function setUserRole(db: Db, id: string, role: PortalRole): Promise<void> {
  await db.updateTable('portal_users').set({ role }).where('id', '=', id).execute();
}

/** Disables an enabled user of the partner; undefined when there is none to disable. */
export async function disableUser(
  db: Db,
  partnerId: string,
  id: string,
  at: Date,
): Promise<UserRow | undefined> {
  return db
    .updateTable('portal_users')
    .set({ disabled_at: at })
    .where('id', '=', id)
    .where('partner_id', '=', partnerId)
    .where('disabled_at', 'is', null)
    .returningAll()
    .executeTakeFirst();
}

/** Keeps the portal language a user chose. */
export async function setUserLanguage(db: Db, userId: string, language: 'ro' | 'ru' | 'en'): Promise<void> {
  await db.updateTable('portal_users').set({ language }).where('id', '=', userId).execute();
}

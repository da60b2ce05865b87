import type { Insertable } from 'kysely';
import { USER_AND_PARTNER } from './users.ts';
import type { Db } from '../database.ts';
import type { PortalSessionsTable } from '../schema.ts';

/** Portal sign-ins, keyed by the SHA-256 of the cookie's random id (the id itself is never stored). */
export async function insertPortalSession(db: Db, session: Insertable<PortalSessionsTable>): Promise<void> {
  await db.insertInto('portal_sessions').values(session).execute();
}

/** A session seen since `idleSince`, with its user and whether the user or its partner is disabled. */
export async function findLivePortalSession(db: Db, idSha256: string, idleSince: Date) {
  return db
    .selectFrom('portal_sessions as s')
    .innerJoin('portal_users as u', 'u.id', 's.user_id')
    .innerJoin('partners as p', 'p.id', 'u.partner_id')
    .select(['s.csrf_secret', 's.last_seen_at', ...USER_AND_PARTNER])
    .where('s.id_sha256', '=', idSha256)
    .where('s.last_seen_at', '>=', idleSince)
    .executeTakeFirst();
}

/** Ends every session of a user (it was disabled). */
export async function deleteUserSessions(db: Db, userId: string): Promise<void> {
  await db.deleteFrom('portal_sessions').where('user_id', '=', userId).execute();
}

/** Ends every session of a user but the one kept (its password was changed in that one). */
export async function deleteOtherUserSessions(db: Db, userId: string, keepSha256: string): Promise<void> {
  await db
    .deleteFrom('portal_sessions')
    .where('user_id', '=', userId)
    .where('id_sha256', '!=', keepSha256)
    .execute();
}

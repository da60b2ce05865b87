import type { Kysely, Transaction } from 'kysely';
import { USER_AND_PARTNER } from './users.ts';
import type { DB } from '../schema.ts';

type Conn = Kysely<DB> | Transaction<DB>;

/** Portal sign-ins, keyed by the SHA-256 of the cookie's random id (the id itself is never stored). */
export async function insertPortalSession(
  db: Conn,
  s: { idSha256: string; userId: string; csrfSecret: string; at: Date },
): Promise<void> {
  await db
    .insertInto('portal_sessions')
    .values({
      id_sha256: s.idSha256,
      user_id: s.userId,
      csrf_secret: s.csrfSecret,
      created_at: s.at,
      last_seen_at: s.at,
    })
    .execute();
}

/** A session seen since `idleSince`, with its user and whether the user or its partner is disabled. */
export async function findLivePortalSession(db: Conn, idSha256: string, idleSince: Date) {
  return db
    .selectFrom('portal_sessions as s')
    .innerJoin('portal_users as u', 'u.id', 's.user_id')
    .innerJoin('partners as p', 'p.id', 'u.partner_id')
    .select(['s.csrf_secret', 's.last_seen_at', ...USER_AND_PARTNER])
    .where('s.id_sha256', '=', idSha256)
    .where('s.last_seen_at', '>=', idleSince)
    .executeTakeFirst();
}

/** Marks a session seen now (the caller does it at most once a minute). */
export async function touchPortalSession(db: Conn, idSha256: string, at: Date): Promise<void> {
  await db
    .updateTable('portal_sessions')
    .set({ last_seen_at: at })
    .where('id_sha256', '=', idSha256)
    .execute();
}

export async function deletePortalSession(db: Conn, idSha256: string): Promise<boolean> {
  const r = await db.deleteFrom('portal_sessions').where('id_sha256', '=', idSha256).executeTakeFirst();
  return Number(r.numDeletedRows) > 0;
}

/** Ends every session of a user (it was disabled). */
export async function deleteUserSessions(db: Conn, userId: string): Promise<number> {
  const r = await db.deleteFrom('portal_sessions').where('user_id', '=', userId).executeTakeFirst();
  return Number(r.numDeletedRows);
}

/** Removes the sessions idle since before `idleSince`. */
export async function deleteIdlePortalSessions(db: Conn, idleSince: Date): Promise<void> {
  await db.deleteFrom('portal_sessions').where('last_seen_at', '<', idleSince).execute();
}

import type { Db } from '../schema.ts';

/**
 * The two tables of browser sign-ins, the console's and the portal's: both keyed by the SHA-256 of
 * the cookie's random id (the id itself is never stored), both with when the session was last seen.
 */
export type SessionTable = 'console_sessions' | 'portal_sessions';

/** Marks a session seen now (the caller does it at most once a minute). */
export async function touchSession(db: Db, table: SessionTable, idSha256: string, at: Date): Promise<void> {
  await db.updateTable(table).set({ last_seen_at: at }).where('id_sha256', '=', idSha256).execute();
}

/** Ends one session; true when there was one. */
export async function deleteSession(db: Db, table: SessionTable, idSha256: string): Promise<boolean> {
  const r = await db.deleteFrom(table).where('id_sha256', '=', idSha256).executeTakeFirst();
  return Number(r.numDeletedRows) > 0;
}

/** Removes the sessions idle since before `idleSince`; answers how many. */
export async function deleteIdleSessions(db: Db, table: SessionTable, idleSince: Date): Promise<number> {
  const r = await db.deleteFrom(table).where('last_seen_at', '<', idleSince).executeTakeFirst();
  return Number(r.numDeletedRows);
}

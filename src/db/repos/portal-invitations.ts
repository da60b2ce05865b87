import type { Insertable, Selectable } from 'kysely';
import { USER_AND_PARTNER } from './users.ts';
import type { Db } from '../database.ts';
import type { PortalInvitationsTable } from '../schema.ts';

export type InvitationRow = Selectable<PortalInvitationsTable>;

/** Invitation links, keyed by the SHA-256 of their token (the token itself is never stored). */
export async function insertInvitation(
  db: Db,
  invitation: Insertable<PortalInvitationsTable>,
): Promise<void> {
  await db.insertInto('portal_invitations').values(invitation).execute();
}

/** An unused invitation still valid at `now`, with its user and the user's partner, locked when asked. */
export async function findOpenInvitation(
  db: Db,
  tokenSha256: string,
  now: Date,
  opts: { forUpdate?: boolean } = {},
) {
  const q = db
    .selectFrom('portal_invitations as i')
    .innerJoin('portal_users as u', 'u.id', 'i.user_id')
    .innerJoin('partners as p', 'p.id', 'u.partner_id')
    .select(['i.token_sha256', 'i.expires_at', ...USER_AND_PARTNER])
    .where('i.token_sha256', '=', tokenSha256)
    .where('i.used_at', 'is', null)
    .where('i.expires_at', '>', now);
  return (opts.forUpdate ? q.forUpdate('i') : q).executeTakeFirst();
}

export async function markInvitationUsed(db: Db, tokenSha256: string, at: Date): Promise<void> {
  await db
    .updateTable('portal_invitations')
    .set({ used_at: at })
    .where('token_sha256', '=', tokenSha256)
    .execute();
}

/** Ends every unused link of a user (a new invitation replaces them, a disabled user has none). */
export async function revokeInvitations(db: Db, userId: string, at: Date): Promise<void> {
  await db
    .updateTable('portal_invitations')
    .set({ used_at: at })
    .where('user_id', '=', userId)
    .where('used_at', 'is', null)
    .execute();
}

/** When each of these users' newest unused link ends (the Team page shows pending invitations). */
export async function openInvitationEnds(db: Db, userIds: string[], now: Date): Promise<Map<string, Date>> {
  if (userIds.length === 0) return new Map();
  const rows = await db
    .selectFrom('portal_invitations')
    .select(['user_id'])
    .select((eb) => eb.fn.max('expires_at').as('expires_at'))
    .where('user_id', 'in', userIds)
    .where('used_at', 'is', null)
    .where('expires_at', '>', now)
    .groupBy('user_id')
    .execute();
  return new Map(rows.map((r) => [r.user_id, r.expires_at]));
}

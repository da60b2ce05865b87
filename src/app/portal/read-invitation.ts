import { findOpenInvitation } from '../../db/repos/portal-invitations.ts';
import { emailHeldElsewhere } from '../../db/repos/users.ts';
import { tokenHash } from '../../secrets/secret-box.ts';
import type { Services } from '../services.ts';

/** The words of every link that opens nothing: it tells nothing about which part is wrong. */
export const INVALID_INVITATION =
  'This invitation link does not work: it has expired (links work for 72 hours), it was used already, or a newer one replaced it. Ask whoever invited you for a new one.';

const TOKEN = /^[A-Za-z0-9_-]{43}$/;

/** What the invitation page shows: whom the link is for; undefined for a link that opens nothing. */
export async function readInvitation(
  svc: Services,
  token: string,
): Promise<{ email: string; partnerName: string } | undefined> {
  if (!TOKEN.test(token)) return undefined;
  const found = await findOpenInvitation(svc.db, tokenHash(token), new Date());
  if (!found || found.disabled_at || found.partner_disabled) return undefined;
  if (await emailHeldElsewhere(svc.db, found.email, found.user_id)) return undefined;
  return { email: found.email, partnerName: found.partner_name };
}

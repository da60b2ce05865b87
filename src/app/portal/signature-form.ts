import { changePartner } from '../admin/partners.ts';
import type { Services } from '../services.ts';
import { portalActor } from './actor.ts';
import type { PortalUser } from './roles.ts';

/**
 * Switches the user's partner to timestamped request signatures, or back to accepting the
 * contract's X-Hmac-Signature alone (docs/api-reference.md#signing-requests, decision 0045). The
 * operator's change, made by an owner or a developer.
 */
export async function setTimestampedSignatures(
  svc: Services,
  user: PortalUser,
  required: boolean,
): Promise<void> {
  await changePartner(svc, portalActor(user), user.partnerId, { require_timestamped_signature: required });
}

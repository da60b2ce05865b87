import { notFound } from '../../domain/errors.ts';
import type { PartnerRow } from '../../db/schema.ts';
import type { Correction } from '../../products/types.ts';
import { confirmCancellation, previewCancellation } from '../cancel-order.ts';
import { confirmCorrection, previewCorrection } from '../correct-order.ts';
import type { Services } from '../services.ts';
import { portalActor } from './actor.ts';
import { ownedOrder } from './read-order.ts';
import type { PortalUser } from './roles.ts';

/**
 * Cancellation and correction from the order's page: cancel-order's and correct-order's own use
 * cases (decision 0088), as the user's partner, the audit log naming the user. They undo or change a
 * sale, so they are for the roles that sell (requireChangeSale, src/portal/areas.ts).
 */
async function partnerOf(svc: Services, user: PortalUser, id: string): Promise<PartnerRow> {
  await ownedOrder(svc, user, id);
  const partner = await svc.partners.get(user.partnerId);
  if (!partner) throw notFound('Partner not found');
  return partner;
}

export async function portalPreviewCancel(svc: Services, user: PortalUser, id: string) {
  const partner = await partnerOf(svc, user, id);
  return previewCancellation(svc, partner, id);
}

export async function portalConfirmCancel(svc: Services, user: PortalUser, id: string, quoteId: string) {
  const partner = await partnerOf(svc, user, id);
  await confirmCancellation(svc, portalActor(user), partner, id, quoteId);
}

export async function portalPreviewCorrect(svc: Services, user: PortalUser, id: string, changes: Correction) {
  const partner = await partnerOf(svc, user, id);
  return previewCorrection(svc, partner, id, changes);
}

export async function portalConfirmCorrect(
  svc: Services,
  user: PortalUser,
  id: string,
  changes: Correction,
  quoteId: string,
) {
  const partner = await partnerOf(svc, user, id);
  await confirmCorrection(svc, portalActor(user), partner, id, changes, quoteId);
}

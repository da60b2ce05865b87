import { forbidden } from '../../domain/errors.ts';
import type { PortalRole } from '../../db/schema.ts';

/**
 * What each portal role opens (decision 0037). Every portal use case checks its area here, so a
 * page the role may not see answers 403 whichever way it is reached.
 */
export const PORTAL_ROLES: readonly PortalRole[] = ['owner', 'developer', 'cashier', 'accountant'];

export type PortalArea = 'sell' | 'orders' | 'wallet' | 'developers' | 'team';

const AREAS: Record<PortalRole, readonly PortalArea[]> = {
  owner: ['sell', 'orders', 'wallet', 'developers', 'team'],
  developer: ['developers', 'orders'],
  cashier: ['sell', 'orders'],
  accountant: ['orders', 'wallet'],
};

/** What a role does, in words (the Team page and the invitation form). */
export const ROLE_TEXT: Record<PortalRole, string> = {
  owner: 'everything, and invites and disables users',
  developer: 'Developers (secret, webhook) and Orders',
  cashier: 'Sell (the sales desk) and Orders',
  accountant: 'Orders and Wallet',
};

/** The signed-in portal user, as every portal use case receives it. */
export interface PortalUser {
  id: string;
  email: string;
  role: PortalRole;
  partnerId: string;
  partnerName: string;
  /** The portal language the user chose; null until they choose. */
  language: 'ro' | 'ru' | 'en' | null;
}

/** The user of a row read with its partner (USER_AND_PARTNER, src/db/repos/users.ts). */
export const portalUserOf = (r: {
  user_id: string;
  email: string;
  role: PortalRole;
  partner_id: string;
  partner_name: string;
  language: 'ro' | 'ru' | 'en' | null;
}): PortalUser => ({
  id: r.user_id,
  email: r.email,
  role: r.role,
  partnerId: r.partner_id,
  partnerName: r.partner_name,
  language: r.language,
});

export const mayOpen = (role: PortalRole, area: PortalArea): boolean => AREAS[role].includes(area);

const AREA_NAMES: Record<PortalArea, string> = {
  sell: 'Sell',
  orders: 'Orders',
  wallet: 'Wallet',
  developers: 'Developers',
  team: 'Team',
};

/** Refuses (403) a user whose role does not open `area`, saying whose page it is. */
export function requireArea(user: PortalUser, area: PortalArea): void {
  if (mayOpen(user.role, area)) return;
  const roles = PORTAL_ROLES.filter((r) => mayOpen(r, area));
  throw forbidden(
    `${AREA_NAMES[area]} is for the ${roles.join(', ').replace(/, ([^,]*)$/, ' and $1')} roles; you are signed in as ${user.role}. Ask an owner of your account.`,
  );
}

/** Only owners and developers re-send webhooks from Orders: it is the developers' business. */
export function requireResend(user: PortalUser): void {
  if (!mayOpen(user.role, 'developers')) {
    throw forbidden('Re-sending webhooks is for the owner and developer roles.');
  }
}

import type { PortalRole } from '../../db/schema.ts';

/** The roles of a partner's portal users (decision 0037); what each opens is src/portal/areas.ts. */
export const PORTAL_ROLES: readonly PortalRole[] = ['owner', 'developer', 'cashier', 'accountant'];

/** The portal's areas: the pages under `/portal/<area>`. */
export type PortalArea = 'sell' | 'orders' | 'wallet' | 'developers' | 'team';

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

import type { PortalArea } from '../app/portal/roles.ts';
import { mayOpen } from './areas.ts';
import type { PortalRole } from '../db/schema.ts';

/**
 * The portal's navigation, in order; each link is shown to the roles that open its area
 * (./areas.ts). A page is one line here.
 */
export const NAV: readonly { area: PortalArea; label: string; href: string }[] = [
  { area: 'sell', label: 'Sell', href: '/portal/sell' },
  { area: 'orders', label: 'Orders', href: '/portal/orders' },
  { area: 'wallet', label: 'Wallet', href: '/portal/wallet' },
  { area: 'developers', label: 'Developers', href: '/portal/developers' },
  { area: 'team', label: 'Team', href: '/portal/team' },
];

export const navFor = (role: PortalRole) => NAV.filter((link) => mayOpen(role, link.area));

/** The first page after signing in: a cashier's is the sales desk, everyone else's Orders. */
export const homeFor = (role: PortalRole): string => (role === 'cashier' ? '/portal/sell' : '/portal/orders');

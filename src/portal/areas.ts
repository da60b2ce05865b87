import type { PortalArea, PortalUser } from '../app/portal/roles.ts';
import { PORTAL_ROLES } from '../app/portal/roles.ts';
import type { PortalRole } from '../db/schema.ts';
import { forbidden } from '../domain/errors.ts';

/**
 * What each portal role opens (decisions 0037, 0099): an area is the pages under `/portal/<area>`,
 * checked once a request by the portal's preHandler hook (src/portal/routes.ts), so a page the role
 * may not see answers 403 whichever way it is reached. The navigation shows the same areas.
 */
export const AREAS: Record<PortalRole, readonly PortalArea[]> = {
  owner: ['sell', 'orders', 'wallet', 'developers', 'team'],
  developer: ['developers', 'orders'],
  cashier: ['sell', 'orders'],
  accountant: ['orders', 'wallet'],
};

const AREA_NAMES: Record<PortalArea, string> = {
  sell: 'Sell',
  orders: 'Orders',
  wallet: 'Wallet',
  developers: 'Developers',
  team: 'Team',
};

export const mayOpen = (role: PortalRole, area: PortalArea): boolean => AREAS[role].includes(area);

/** The area a portal path is in (`/portal/sell/offers`: sell); undefined for the pages of every user. */
export function areaOf(path: string): PortalArea | undefined {
  const first = /^\/portal\/([^/]+)/.exec(path)?.[1];
  return Object.keys(AREA_NAMES).find((a): a is PortalArea => a === first);
}

/**
 * Why `user` may not open the page at `path`, saying whose page it is (answered with 403); undefined
 * when the role opens the page's area, or the page is in none.
 */
export function areaRefusal(user: PortalUser, path: string): string | undefined {
  const area = areaOf(path);
  if (area === undefined || mayOpen(user.role, area)) return undefined;
  const roles = PORTAL_ROLES.filter((r) => mayOpen(r, area));
  return `${AREA_NAMES[area]} is for the ${roles.join(', ').replace(/, ([^,]*)$/, ' and $1')} roles; you are signed in as ${user.role}. Ask an owner of your account.`;
}

/** Only the roles that open Developers re-send webhooks from Orders: it is the developers' business. */
export function requireResend(user: PortalUser): void {
  if (!mayOpen(user.role, 'developers')) {
    throw forbidden('Re-sending webhooks is for the owner and developer roles.');
  }
}

/** Cancelling and correcting undo or change a sale: for the roles that open Sell. */
export function requireChangeSale(user: PortalUser): void {
  if (!mayOpen(user.role, 'sell')) {
    throw forbidden('Cancelling and correcting policies is for the owner and cashier roles.');
  }
}

/** What an order's page offers the user beside reading it: its areas' actions (decision 0088, 0092). */
export const orderRights = (user: PortalUser) => ({
  developers: mayOpen(user.role, 'developers'),
  sell: mayOpen(user.role, 'sell'),
});

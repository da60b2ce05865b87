import { findPartner } from '../db/repos/partners.ts';
import { getSetting, putSetting } from '../db/repos/settings.ts';
import { creditWallet } from './admin/credit-wallet.ts';
import { createPartner } from './admin/partners.ts';
import type { Services } from './services.ts';

export const DEMO_PARTNER_ID = 'demo';

/**
 * The sandbox's demo partner: made on first start with a wallet of 10 000 MDL online and 500 MDL
 * promo (credits by reference, so a restart never credits twice). Returns its id and newest secret.
 */
export async function ensureDemoPartner(svc: Services): Promise<{ id: string; secret: string }> {
  if (!(await findPartner(svc.db, DEMO_PARTNER_ID))) {
    try {
      await createPartner(svc, { id: DEMO_PARTNER_ID, name: 'Demo Partner', wallet: true });
    } catch (err) {
      // Another instance on the same database made it first.
      if (!(await findPartner(svc.db, DEMO_PARTNER_ID))) throw err;
    }
  }
  const seed = { partnerId: DEMO_PARTNER_ID, actor: 'sandbox-seed' };
  await creditWallet(svc, {
    ...seed,
    wallet: 'online',
    amountBani: 1_000_000,
    reference: 'sandbox-seed-online',
  });
  await creditWallet(svc, { ...seed, wallet: 'promo', amountBani: 50_000, reference: 'sandbox-seed-promo' });
  const demo = await findPartner(svc.db, DEMO_PARTNER_ID);
  return { id: DEMO_PARTNER_ID, secret: demo!.secrets[0]! };
}

/** The admin token: from ADMIN_TOKEN, or in the sandbox generated once and stored. */
export async function ensureAdminToken(svc: Services, configured: string | undefined): Promise<string> {
  if (configured) return configured;
  const stored = await getSetting<string>(svc.db, 'admin_token');
  if (stored) return stored;
  const token = Buffer.from(svc.randomBytes(24)).toString('hex');
  await putSetting(svc.db, 'admin_token', token, new Date());
  return (await getSetting<string>(svc.db, 'admin_token')) ?? token;
}

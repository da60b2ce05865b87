import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { reconcile } from '../../src/app/reconcile.ts';
import { mdlTextToBani } from '../../src/domain/money.ts';
import { startHarness, type Creds, type Harness } from '../support/harness.ts';
import { balance, rcaDraft, rcaOffers } from '../wallet/support.ts';

/** Money bounds (decision 0048): finding 10 of the second security round. */
let h: Harness;
beforeAll(async () => {
  h = await startHarness();
});
// Every money test leaves the ledger and the balances agreeing (npm run reconcile's check).
afterEach(async () => {
  expect((await reconcile(h.service.svc.db)).differences).toEqual([]);
});
afterAll(async () => h?.close());

const credit = (p: Creds, amount: unknown, wallet = 'online', reference = `ref-${Math.random()}`) =>
  h.admin('POST', `/admin/partners/${p.id}/wallet/credits`, { wallet, amount, reference });

async function ledgerCount(p: Creds): Promise<number> {
  const res = await h.admin<{ ledger: unknown[] }>('GET', `/admin/partners/${p.id}/wallet?limit=500`);
  return res.body.ledger.length;
}

describe('finding 10: wallet credits have no upper bound and lose precision past 2^53 bani', () => {
  it('refuses one credit above 10 000 000.00 MDL, naming the limit, and changes nothing', async () => {
    const p = await h.newPartner();
    for (const amount of [10_000_000.01, 90_071_992_547_409.91, 1e20]) {
      const res = await credit(p, amount);
      expect(res.status, String(amount)).toBe(400);
      expect(res.body.message).toBe('amount must be at most 10000000.00 MDL in one credit');
    }
    expect((await balance(h, p)).wallets.online).toBe(0);
    expect(await ledgerCount(p)).toBe(0);
    expect((await credit(p, 10_000_000)).status).toBe(200);
    expect((await balance(h, p)).wallets.online).toBe(10_000_000);
  });

  it('refuses a credit that would take a sub-wallet past 1 000 000 000.00 MDL; every bani stays exact', async () => {
    const p = await h.newPartner();
    for (let i = 0; i < 99; i++) expect((await credit(p, 10_000_000)).status).toBe(200);
    expect((await credit(p, 9_999_999.99)).status).toBe(200);
    const entries = await ledgerCount(p);
    const over = await credit(p, 0.02);
    expect(over.status).toBe(400);
    expect(over.body.message).toBe(
      'This credit would take the online wallet past 1000000000.00 MDL, the most a sub-wallet holds: nothing was credited',
    );
    expect(await ledgerCount(p)).toBe(entries);
    // Exactly to the limit is allowed, one ban at a time, each counted.
    expect((await credit(p, 0.01)).status).toBe(200);
    expect((await balance(h, p)).wallets.online).toBe(1_000_000_000);
    expect((await credit(p, 0.01)).status).toBe(400);
    // The other sub-wallets have limits of their own.
    expect((await credit(p, 0.01, 'promo')).status).toBe(200);
    expect((await balance(h, p)).wallets.promo).toBe(0.01);
  });

  it('answers a repeated credit reference with the balance, even once the sub-wallet is full', async () => {
    const p = await h.newPartner();
    for (let i = 0; i < 99; i++) expect((await credit(p, 10_000_000)).status).toBe(200);
    const last = await credit(p, 10_000_000, 'online', 'wire-last');
    expect(last.status).toBe(200);
    expect((await balance(h, p)).wallets.online).toBe(1_000_000_000);
    const entries = await ledgerCount(p);
    // The same transfer reported again (a retry after a lost answer): nothing more, no refusal.
    const again = await credit(p, 10_000_000, 'online', 'wire-last');
    expect(again.status, JSON.stringify(again.body)).toBe(200);
    expect(again.body.wallets).toEqual(last.body.wallets);
    expect(await ledgerCount(p)).toBe(entries);
    // A new reference past the limit is still refused.
    expect((await credit(p, 0.01, 'online', 'wire-new')).status).toBe(400);
  });

  it('a refund always books, even past the sub-wallet limit', async () => {
    const p = await h.newPartner();
    await credit(p, 5_000);
    const draft = await rcaDraft(h, (await rcaOffers(h, p))[0]!, p);
    const paid = await h.call('pay-order-from-balance', { id: draft.id }, p);
    expect(paid.status, JSON.stringify(paid.body)).toBe(200);
    // The wallet fills to its limit while the order is paid.
    const left = (await balance(h, p)).wallets.online;
    let room = Math.round((1_000_000_000 - left) * 100);
    while (room > 0) {
      const step = Math.min(room, 1_000_000_000);
      expect((await credit(p, step / 100)).status).toBe(200);
      room -= step;
    }
    expect((await balance(h, p)).wallets.online).toBe(1_000_000_000);
    await h.waitForStatus(draft.id, 'completed', { creds: p });
    const refund = await h.admin('POST', `/admin/orders/${draft.id}/refund`, { reason: 'test' });
    expect(refund.status, JSON.stringify(refund.body)).toBe(200);
    expect((await balance(h, p)).wallets.online).toBe(1_000_000_000 + draft.price);
  });

  it('reads typed amounts (console, command line) as decimal text, never through a float', () => {
    expect(mdlTextToBani('0.29')).toBe(29);
    expect(mdlTextToBani('99.5')).toBe(9950);
    expect(mdlTextToBani('10000000.00')).toBe(1_000_000_000);
    for (const bad of ['1e3', '0x10', '1.005', '', ' 1', '1.', '.5', 'Infinity', '99999999999999999'])
      expect(mdlTextToBani(bad), bad).toBeNull();
  });
});

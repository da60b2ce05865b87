import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { reconcile } from '../../src/app/reconcile.ts';
import { ledgerSums } from '../../src/db/repos/wallets.ts';
import { payment, startHarness, type Creds, type Harness } from '../support/harness.ts';
import { balance, credit, rcaDraft, rcaOffers, shuffledAttempts, type RcaOffer } from './support.ts';

/**
 * The wallet against a model of itself: random sequences of credits, payments and refunds, then a
 * storm of concurrent payments. Issuance runs in the background as in production; a refund waits
 * for the order to be completed (or failed) first.
 */
let h: Harness;
let offers: RcaOffer[];
const CLOCK_MS = Date.parse('2026-11-21T10:00:00+02:00');
const toBani = (mdl: number) => Math.round(mdl * 100);

beforeAll(async () => {
  h = await startHarness();
  await h.setClock('2026-11-21T10:00:00+02:00');
  offers = await rcaOffers(h);
  expect(new Set(offers.map((o) => o.price)).size).toBeGreaterThan(1);
}, 60_000);
afterAll(async () => {
  if (!h) return;
  // After this file's burst the pools still finish closing their sockets for a moment; dropping the
  // PostgreSQL test database under them makes the server kill them (57P01) as unhandled errors.
  await h.service.stop();
  await new Promise((r) => setTimeout(r, 500));
  await h.close();
});

type Sub = 'online' | 'promo' | 'insurance';
type Op =
  | { t: 'credit'; wallet: Sub; bani: number; ref: number }
  | { t: 'pay'; offer: number }
  | { t: 'confirm'; offer: number }
  | { t: 'refund'; k: number }
  | { t: 'payAgain'; k: number };

const opArb: fc.Arbitrary<Op> = fc.oneof(
  fc.record({
    t: fc.constant('credit' as const),
    wallet: fc.constantFrom<Sub>('online', 'promo', 'insurance'),
    bani: fc.integer({ min: 1, max: 400_000 }),
    ref: fc.integer({ min: 0, max: 4 }),
  }),
  fc.record({ t: fc.constant('pay' as const), offer: fc.nat(20) }),
  fc.record({ t: fc.constant('pay' as const), offer: fc.nat(20) }),
  fc.record({ t: fc.constant('confirm' as const), offer: fc.nat(20) }),
  fc.record({ t: fc.constant('refund' as const), k: fc.nat(20) }),
  fc.record({ t: fc.constant('payAgain' as const), k: fc.nat(20) }),
);

/** Waits until background issuance has finished with the order: only then may it be refunded. */
async function settled(id: string, p: Creds) {
  for (let i = 0; i < 200; i++) {
    const s = (await h.call('get-order', { id }, p)).body.status;
    if (s === 'completed' || s === 'failed' || s === 'refunded') return;
    await new Promise((r) => setTimeout(r, 25));
  }
  throw new Error(`order ${id} was not issued in time`);
}

interface ModelOrder {
  id: string;
  price: number;
  paidFrom: 'online' | 'promo' | 'customer';
  refunded: boolean;
}

async function apply(
  p: Creds,
  op: Op,
  m: { w: Record<Sub, number>; refs: Set<number>; orders: ModelOrder[]; entries: number },
) {
  switch (op.t) {
    case 'credit': {
      await credit(h, p.id, op.wallet, op.bani / 100, `ref-${op.ref}`);
      if (!m.refs.has(op.ref)) {
        m.refs.add(op.ref);
        m.w[op.wallet] += op.bani;
        m.entries++;
      }
      return;
    }
    case 'pay':
    case 'confirm': {
      const { id, price } = await rcaDraft(h, offers[op.offer % offers.length]!, p);
      const bani = toBani(price);
      if (op.t === 'confirm') {
        const res = await h.call('confirm-order', { id, payment: payment(price, { paid_at: CLOCK_MS }) }, p);
        expect(res.status, JSON.stringify(res.body)).toBe(200);
        m.orders.push({ id, price: bani, paidFrom: 'customer', refunded: false });
        return;
      }
      const res = await h.call('pay-order-from-balance', { id }, p);
      const from = m.w.promo >= bani ? 'promo' : m.w.online >= bani ? 'online' : null;
      if (!from) {
        expect(res.status, 'the model says no single wallet covers it').toBe(400);
        expect(res.body).toMatchObject({ error: 'Insufficient balance' });
        const after = await h.call('get-order', { id }, p);
        expect(after.body.status, 'a refused wallet payment leaves the draft as it was').toBe('draft');
        return;
      }
      expect(res.status, JSON.stringify(res.body)).toBe(200);
      m.w[from] -= bani;
      m.entries++;
      m.orders.push({ id, price: bani, paidFrom: from, refunded: false });
      return;
    }
    case 'refund': {
      const o = m.orders[op.k % Math.max(1, m.orders.length)];
      if (!o) return;
      await settled(o.id, p);
      const res = await h.admin('POST', `/admin/orders/${o.id}/refund`, { reason: 'model' });
      if (o.refunded) {
        expect(res.status).toBe(409);
        return;
      }
      expect(res.status, JSON.stringify(res.body)).toBe(200);
      o.refunded = true;
      if (o.paidFrom !== 'customer') {
        m.w[o.paidFrom] += o.price;
        m.entries++;
      }
      return;
    }
    case 'payAgain': {
      const o = m.orders[op.k % Math.max(1, m.orders.length)];
      if (!o) return;
      const res = await h.call('pay-order-from-balance', { id: o.id }, p);
      expect(res.status).toBe(400);
      expect(res.body.error).toMatch(/^Order is not payable/);
    }
  }
}

describe('wallet model', () => {
  it('agrees with a simple model over random credits, payments and refunds', async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(opArb, { minLength: 1, maxLength: 20 }), async (ops) => {
        const p = await h.newPartner();
        const m = {
          w: { online: 0, promo: 0, insurance: 0 },
          refs: new Set<number>(),
          orders: [] as ModelOrder[],
          entries: 0,
        };
        for (const op of ops) {
          await apply(p, op, m);
          const b = await balance(h, p);
          expect(b.wallets).toEqual({
            online: m.w.online / 100,
            promo: m.w.promo / 100,
            insurance: m.w.insurance / 100,
          });
          expect(toBani(b.balance)).toBe(m.w.online + m.w.promo);
        }
        const db = h.service.svc.db;
        expect(await ledgerSums(db, p.id)).toEqual(m.w);
        const n = await db
          .selectFrom('ledger_entries')
          .select((eb) => eb.fn.countAll<number>().as('n'))
          .where('partner_id', '=', p.id)
          .executeTakeFirstOrThrow();
        expect(Number(n.n)).toBe(m.entries);
      }),
      { numRuns: 50 },
    );
    expect((await reconcile(h.service.svc.db)).differences).toEqual([]);
  }, 120_000);
});

// PostgreSQL runs the payments truly in parallel on the pool, where the row locks alone keep the
// books straight.
const DRAFTS = 200;
const ATTEMPTS = DRAFTS * 5;

describe(`concurrent payments (${ATTEMPTS} attempts over ${DRAFTS} drafts)`, () => {
  it('pays every draft at most once, never overdraws, and the books reconcile', async () => {
    const p = await h.newPartner();
    const drafts: { id: string; price: number }[] = [];
    for (let i = 0; i < DRAFTS; i++) drafts.push(await rcaDraft(h, offers[i % offers.length]!, p));
    // Enough for roughly a third of the drafts, split so both sub-wallets run dry.
    const cheapest = Math.min(...drafts.map((d) => toBani(d.price)));
    const online = cheapest * Math.floor(DRAFTS / 4);
    const promo = cheapest * Math.floor(DRAFTS / 10);
    await credit(h, p.id, 'online', online / 100);
    await credit(h, p.id, 'promo', promo / 100);

    const attempts = shuffledAttempts(drafts, ATTEMPTS);
    const wins = new Map<string, number>();
    const unexpected: unknown[] = [];
    const started = Date.now();
    for (let i = 0; i < attempts.length; i += 50) {
      const batch = attempts.slice(i, i + 50);
      const results = await Promise.all(
        batch.map(({ d, wallet }) =>
          wallet
            ? h.call('pay-order-from-balance', { id: d.id }, p)
            : h.call('confirm-order', { id: d.id, payment: payment(d.price, { paid_at: CLOCK_MS }) }, p),
        ),
      );
      results.forEach((r, k) => {
        if (r.status === 200) wins.set(batch[k]!.d.id, (wins.get(batch[k]!.d.id) ?? 0) + 1);
        else if (
          r.status !== 400 ||
          !/^(Order is not payable|Insufficient balance)/.test(String(r.body.error))
        )
          unexpected.push(r.body);
      });
    }
    const ms = Date.now() - started;
    console.log(
      `${ATTEMPTS} payment attempts over ${DRAFTS} drafts in ${ms} ms on ${inject('testDatabases').server}`,
    );

    expect(unexpected).toEqual([]);
    expect(
      [...wins.values()].every((n) => n === 1),
      'no draft paid twice',
    ).toBe(true);
    const db = h.service.svc.db;
    const rows = await db
      .selectFrom('orders')
      .select(['id', 'status', 'payment_method', 'price'])
      .where('partner_id', '=', p.id)
      .execute();
    // Issuance runs meanwhile, so a paid order may already be completed (or failed).
    expect(rows.filter((r) => r.status !== 'draft').length).toBe(wins.size);
    const events = await db
      .selectFrom('order_events')
      .innerJoin('orders', 'orders.id', 'order_events.order_id')
      .select('order_events.order_id')
      .where('orders.partner_id', '=', p.id)
      .where('to_status', '=', 'paid')
      .execute();
    expect(events.length).toBe(wins.size);

    const paidByWallet = rows.filter((r) => r.payment_method === 'wallet');
    expect(paidByWallet.length).toBeGreaterThan(0);
    const w = await db
      .selectFrom('wallets')
      .selectAll()
      .where('partner_id', '=', p.id)
      .executeTakeFirstOrThrow();
    expect(w.online).toBeGreaterThanOrEqual(0);
    expect(w.promo).toBeGreaterThanOrEqual(0);
    const fall = online + promo - (w.online + w.promo);
    expect(fall).toBe(paidByWallet.reduce((s, r) => s + r.price, 0));
    // The wallet ran dry: some wallet attempt must have been refused for want of balance.
    expect(w.online + w.promo).toBeLessThan(Math.max(...drafts.map((d) => toBani(d.price))) * 2);

    const books = await reconcile(db);
    expect(books.differences).toEqual([]);
  }, 180_000);
});

import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { reconcile } from '../../src/app/reconcile.ts';
import { productModule } from '../../src/products/registry.ts';
import { payment, startHarness, type Creds, type Harness } from '../support/harness.ts';
import { balance, credit, rcaDraft, rcaOffers, reasonError, type RcaOffer } from './support.ts';

let h: Harness;
let offer: RcaOffer;
const TODAY = '2026-11-21';
// The sandbox clock's instant: confirm-order wants paid_at near the service's now, not the real one.
const CLOCK_MS = Date.parse(`${TODAY}T10:00:00+02:00`);

beforeAll(async () => {
  h = await startHarness();
  await h.setClock(`${TODAY}T10:00:00+02:00`);
  offer = (await rcaOffers(h))[0]!;
}, 60_000);
afterAll(() => h?.close());

/** A partner with exactly these balances (MDL). */
async function partnerWith(b: { online?: number; promo?: number; insurance?: number }): Promise<Creds> {
  const p = await h.newPartner();
  for (const w of ['online', 'promo', 'insurance'] as const) if (b[w]) await credit(h, p.id, w, b[w]!);
  return p;
}

/** The parts of the operator's order detail and statement these tests read. */
interface Detail {
  status: string;
  payment_method: string;
  payment: Record<string, unknown>;
  ledger: { kind: string; wallet: string; amount: number; balance_after: number }[];
  history: { to: string }[];
  refund: Record<string, unknown> | null;
}
type Balances = { online: number; promo: number; insurance: number };
interface Statement {
  opening: Balances;
  closing: Balances;
  entries: { wallet: string; kind: string; amount: number; balance_after: number; order_id: string | null }[];
}

const pay = (id: string, creds?: Creds) => h.call('pay-order-from-balance', { id }, creds);
const setSpending = (on: boolean) => h.admin('PUT', '/admin/settings', { balance_spending_enabled: on });

/**
 * The issue-order jobs pg-boss holds for an order (completed ones stay until their retention ends),
 * once the issuance outbox has created the jobs of what is queued in it.
 */
async function issueJobs(orderId: string): Promise<number> {
  await h.service.outbox.flush();
  const { rows } = await sql<{ n: number }>`
    select count(*)::int as n from pgboss.job where name = 'issue-order' and data->>'orderId' = ${orderId}`.execute(
    h.service.svc.db,
  );
  return rows[0]!.n;
}

describe('get-balance', () => {
  it('answers the balance object: balance = online + promo, insurance shown apart, updated_at from the service clock', async () => {
    const p = await partnerWith({ online: 100.5, promo: 20.25, insurance: 7 });
    const res = await h.call('get-balance', {}, p);
    expect(res.status).toBe(200);
    expect(res.body).toEqual({
      balance: 120.75,
      currency: 'MDL',
      wallets: { online: 100.5, insurance: 7, promo: 20.25 },
      updated_at: expect.stringMatching(/^2026-11-21T10:0\d:\d{2}\.\d{3}\+02:00$/),
    });
  });

  it('shows the demo partner its seeded 10 000 MDL online and 500 MDL promo', async () => {
    // Other tests here spend the demo wallet, so the seed is checked where it cannot move: the ledger.
    const s = await h.admin<{
      entries: { wallet: string; kind: string; amount: number; reference: string | null }[];
    }>('GET', '/admin/partners/demo/wallet/statement?from=2026-01-01&to=2026-12-31');
    expect(s.status).toBe(200);
    expect(s.body.entries.filter((e) => e.reference?.startsWith('sandbox-seed'))).toEqual([
      expect.objectContaining({
        wallet: 'online',
        kind: 'credit',
        amount: 10_000,
        reference: 'sandbox-seed-online',
      }),
      expect.objectContaining({
        wallet: 'promo',
        kind: 'credit',
        amount: 500,
        reference: 'sandbox-seed-promo',
      }),
    ]);
    const b = await balance(h);
    expect(b.wallets.online + b.wallets.promo).toBe(b.balance);
  });

  it('ignores unknown fields and answers 403 without a wallet', async () => {
    const p = await h.newPartner({ wallet: false });
    const res = await h.call('get-balance', { extra: 1 }, p);
    expect(res.status).toBe(403);
    expect(res.body).toEqual(reasonError(403, 'No wallet account linked to this partner'));
  });

  it('is not reachable unsigned', async () => {
    const res = await h.service.app.inject({ method: 'POST', url: '/v1/get-balance', payload: {} });
    expect(res.statusCode).toBe(401);
  });
});

describe('pay-order-from-balance: which wallet pays', () => {
  it('takes promo when promo alone covers the price, and answers the order as get-order shows it', async () => {
    const p = await partnerWith({ online: 100_000, promo: offer.price });
    const { id, price } = await rcaDraft(h, offer, p);
    const res = await pay(id, p);
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    expect(res.body).toEqual({
      id,
      status: 'paid',
      description: expect.any(String),
      price,
      currency: 'MDL',
    });
    expect((await balance(h, p)).wallets).toEqual({ online: 100_000, promo: 0, insurance: 0 });

    const detail = await h.admin<Detail>('GET', `/admin/orders/${id}`);
    expect(detail.body.payment_method).toBe('wallet');
    expect(detail.body.payment).toMatchObject({ wallet: 'promo', amount: price, currency: 'MDL' });
    expect(detail.body.ledger).toEqual([
      expect.objectContaining({ wallet: 'promo', amount: -price, balance_after: 0, kind: 'payment' }),
    ]);
    expect(detail.body.history.map((e: { to: string }) => e.to)).toContain('paid');
    // One statement books the payment and moves the order: the event and the whole payment are there.
    const db = h.service.svc.db;
    const events = await sql<{ from_status: string | null; to_status: string; reason: string | null }>`
      select from_status, to_status, reason, actor from order_events where order_id = ${id} order by id`.execute(
      db,
    );
    expect(events.rows.slice(0, 2)).toEqual([
      { from_status: null, to_status: 'draft', reason: null, actor: `partner:${p.id}` },
      { from_status: 'draft', to_status: 'paid', reason: 'wallet payment', actor: `partner:${p.id}` },
    ]);
    const stored = await sql<{ payment: unknown; entry: number }>`
      select o.payment, (select max(id) from ledger_entries l where l.order_id = o.id) as entry
      from orders o where o.id = ${id}`.execute(db);
    expect(stored.rows[0]!.payment).toEqual({
      transaction_id: `wallet:${id}`,
      paid_at: expect.closeTo(CLOCK_MS, -5), // the sandbox clock runs on from CLOCK_MS
      amount_bani: Math.round(price * 100),
      currency: 'MDL',
      receipt_id: `wallet:${stored.rows[0]!.entry}`,
      wallet: 'promo',
    });
    // Issuance proceeds exactly as after confirm-order.
    await h.waitForStatus(id, 'completed', { creds: p });
  });

  it('takes online when promo falls short, with no cover across wallets', async () => {
    const p = await partnerWith({ online: offer.price + 1, promo: offer.price - 0.01 });
    const { id } = await rcaDraft(h, offer, p);
    expect((await pay(id, p)).status).toBe(200);
    expect((await balance(h, p)).wallets).toEqual({ online: 1, promo: offer.price - 0.01, insurance: 0 });
  });

  it('refuses when no single wallet covers the price even though together they would (and insurance never pays)', async () => {
    const p = await partnerWith({
      online: offer.price - 0.01,
      promo: offer.price - 0.01,
      insurance: 1_000_000,
    });
    const { id } = await rcaDraft(h, offer, p);
    const res = await pay(id, p);
    expect(res.status).toBe(400);
    expect(res.body).toEqual(reasonError(400, 'Insufficient balance'));
    // Rule 4: on any error the order stays draft and the wallet is untouched.
    expect((await h.call('get-order', { id }, p)).body.status).toBe('draft');
    expect((await balance(h, p)).wallets).toEqual({
      online: offer.price - 0.01,
      promo: offer.price - 0.01,
      insurance: 1_000_000,
    });
    const detail = await h.admin<Detail>('GET', `/admin/orders/${id}`);
    expect(detail.body.ledger).toEqual([]);
    // The issuance job is enqueued before the booking, in the same transaction: the refusal the
    // booking statement raises takes it back too.
    expect(await issueJobs(id)).toBe(0);
  });

  it('answers 400 to a second payment, whichever way the first went', async () => {
    const p = await partnerWith({ online: offer.price * 3 });
    const a = await rcaDraft(h, offer, p);
    expect((await pay(a.id, p)).status).toBe(200);
    const again = await pay(a.id, p);
    expect(again.status).toBe(400);
    expect(again.body.error).toMatch(/^Order is not payable \(status (paid|completed)\)$/);
    expect(await issueJobs(a.id), 'one issuance job, from the payment that went through').toBe(1);
    const b = await rcaDraft(h, offer, p);
    expect(
      (await h.call('confirm-order', { id: b.id, payment: payment(b.price, { paid_at: CLOCK_MS }) }, p))
        .status,
    ).toBe(200);
    expect((await pay(b.id, p)).body.error).toMatch(/^Order is not payable/);
    expect((await balance(h, p)).wallets.online).toBeCloseTo(offer.price * 2, 2);
  });
});

describe('pay-order-from-balance: every error, in the precedence of decision 0012', () => {
  it('403 no wallet comes before the spending switch and the order lookup', async () => {
    const p = await h.newPartner({ wallet: false });
    await setSpending(false);
    try {
      const res = await pay('IAI000000AAA', p);
      expect(res.status).toBe(403);
      expect(res.body).toEqual(reasonError(403, 'No wallet account linked to this partner'));
    } finally {
      await setSpending(true);
    }
  });

  it('403 spending disabled comes before the order lookup, and the switch holds at once', async () => {
    const p = await partnerWith({ online: offer.price });
    const { id } = await rcaDraft(h, offer, p);
    expect((await setSpending(false)).body).toEqual({ balance_spending_enabled: false });
    try {
      for (const target of ['IAI000000AAA', id]) {
        const res = await pay(target, p);
        expect(res.status).toBe(403);
        expect(res.body).toEqual(reasonError(403, 'Balance spending is disabled'));
      }
      // get-balance is a read and stays available.
      expect((await h.call('get-balance', {}, p)).status).toBe(200);
    } finally {
      await setSpending(true);
    }
    expect((await pay(id, p)).status).toBe(200);
  });

  it('404 for an unknown order and for another partner’s order, leaving that order alone', async () => {
    const owner = await partnerWith({ online: offer.price });
    const thief = await partnerWith({ online: offer.price * 2 });
    const { id } = await rcaDraft(h, offer, owner);
    for (const target of ['IAI999999ZZZ', id]) {
      const res = await pay(target, thief);
      expect(res.status).toBe(404);
      expect(res.body).toEqual(reasonError(404, 'Order not found'));
    }
    expect((await h.call('get-order', { id }, owner)).body.status).toBe('draft');
    expect((await balance(h, thief)).wallets.online).toBeCloseTo(offer.price * 2, 2);
  });

  it.skipIf(!productModule('vignette:ro'))(
    '400 RO tariff switch, bare reason, before the status check (the draft has meanwhile expired)',
    async () => {
      try {
        await h.setClock('2026-09-30T12:00:00+03:00');
        const q = await h.call<{ offers: Record<string, unknown>[] }>('get-offers', {
          product: 'vignette:ro',
          vehicle: '100000001',
        });
        const o = q.body.offers.find((x) => x.duration === 30) ?? q.body.offers[0]!;
        const created = await h.call('create-order', {
          customer: { phone: '1' },
          products: [
            {
              product: 'vignette:ro',
              vehicle: '100000001',
              start_date: o.min_start_date,
              duration: o.duration,
              category: o.category,
            },
          ],
        });
        expect(created.status, JSON.stringify(created.body)).toBe(200);
        await h.setClock('2026-10-01T00:05:00+03:00');
        const res = await pay(created.body.id as string);
        expect(res.status).toBe(400);
        expect(res.body.error).toMatch(/^The RO vignette price on this order is no longer valid/);
        expect(res.body.message).toBe(res.body.error);
      } finally {
        await h.setClock(`${TODAY}T10:00:00+02:00`);
      }
    },
  );

  it('400 not payable for an expired draft (by the clock, before any sweep) and a paid order', async () => {
    const p = await partnerWith({ online: offer.price * 2 });
    const { id } = await rcaDraft(h, offer, p);
    try {
      await h.setClock('2026-11-21T23:59:59+02:00');
      const res = await pay(id, p);
      expect(res.status).toBe(400);
      expect(res.body).toEqual(reasonError(400, 'Order is not payable (status expired)'));
    } finally {
      await h.setClock(`${TODAY}T10:00:00+02:00`);
    }
    expect((await balance(h, p)).wallets.online).toBeCloseTo(offer.price * 2, 2);
  });

  it('400 not eligible (catalogue list) after the status check and before the balance check', async () => {
    const common = h.service.svc.catalogue.common;
    const original = common.wallet_eligible_products;
    const broke = await h.newPartner(); // an empty wallet: only eligibility can come first
    const rich = await partnerWith({ online: offer.price * 2 });
    const draft = await rcaDraft(h, offer, broke);
    const paid = await rcaDraft(h, offer, rich);
    expect((await pay(paid.id, rich)).status).toBe(200);
    common.wallet_eligible_products = original.filter((p) => p !== 'rca');
    try {
      const res = await pay(draft.id, broke);
      expect(res.status).toBe(400);
      expect(res.body).toEqual(reasonError(400, 'Balance cannot be applied to this order'));
      const fresh = await rcaDraft(h, offer, rich);
      expect((await pay(fresh.id, rich)).body.error).toBe('Balance cannot be applied to this order');
      expect((await pay(paid.id, rich)).body.error).toMatch(/^Order is not payable/);
    } finally {
      common.wallet_eligible_products = original;
    }
    expect((await pay(draft.id, broke)).body).toEqual(reasonError(400, 'Insufficient balance'));
  });

  it('400 on a body without id (schema)', async () => {
    const res = await pay(undefined as unknown as string);
    expect(res.status).toBe(400);
    expect(res.body.message).toMatch(/id/);
  });
});

describe('operator: settings and credits', () => {
  it('PUT /admin/settings validates its body and reads back', async () => {
    expect((await h.admin('PUT', '/admin/settings', { balance_spending_enabled: 'no' })).status).toBe(400);
    expect((await h.admin('GET', '/admin/settings')).body).toEqual({ balance_spending_enabled: true });
  });

  it('credits land in the named sub-wallet, once per reference', async () => {
    const p = await h.newPartner();
    const first = await credit(h, p.id, 'online', 250.5, 'wire-2026-001');
    expect(first).toMatchObject({ balance: 250.5, wallets: { online: 250.5, promo: 0, insurance: 0 } });
    const again = await credit(h, p.id, 'online', 250.5, 'wire-2026-001');
    expect(again.wallets).toEqual({ online: 250.5, promo: 0, insurance: 0 });
    await credit(h, p.id, 'insurance', 12, 'commission-10');
    expect(await balance(h, p)).toMatchObject({ balance: 250.5, wallets: { insurance: 12 } });
  });

  it('refuses a credit of zero or less, more than 2 decimals, an unknown partner and a partner without wallet', async () => {
    const p = await h.newPartner();
    const noWallet = await h.newPartner({ wallet: false });
    const post = (id: string, amount: number) =>
      h.admin('POST', `/admin/partners/${id}/wallet/credits`, { wallet: 'online', amount, reference: 'x' });
    for (const amount of [0, -5, 1.001]) {
      const res = await post(p.id, amount);
      expect(res.status).toBe(400);
      expect(res.body).toMatchObject({ statusCode: 400, error: expect.stringMatching(/amount/) });
    }
    expect((await post('nobody', 10)).status).toBe(404);
    const res = await post(noWallet.id, 10);
    expect(res.status).toBe(404);
    expect(res.body.error).toBe(`Partner ${noWallet.id} has no wallet`);
  });
});

describe('operator: refunds', () => {
  it('refunds a completed wallet order to the sub-wallet that paid, once', async () => {
    const p = await partnerWith({ online: 5_000, promo: offer.price });
    const { id, price } = await rcaDraft(h, offer, p);
    expect((await pay(id, p)).status).toBe(200);
    await h.waitForStatus(id, 'completed', { creds: p });
    const res = await h.admin('POST', `/admin/orders/${id}/refund`, { reason: 'customer cancelled' });
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    expect(res.body).toMatchObject({ method: 'wallet', status: 'settled', amount: price });
    expect((await balance(h, p)).wallets).toEqual({ online: 5_000, promo: offer.price, insurance: 0 });
    expect((await h.call('get-order', { id }, p)).body.status).toBe('refunded');
    const detail = await h.admin<Detail>('GET', `/admin/orders/${id}`);
    expect(
      detail.body.ledger.map((l: { kind: string; amount: number; wallet: string }) => [
        l.kind,
        l.wallet,
        l.amount,
      ]),
    ).toEqual([
      ['payment', 'promo', -price],
      ['refund', 'promo', price],
    ]);
    expect(detail.body.refund).toMatchObject({ status: 'settled', reason: 'customer cancelled' });

    const twice = await h.admin('POST', `/admin/orders/${id}/refund`, { reason: 'again' });
    expect(twice.status).toBe(409);
    expect(twice.body).toEqual(reasonError(409, 'Order is already refunded'));
    expect((await balance(h, p)).wallets.promo).toBe(offer.price);
  });

  it('returns the money of a failed wallet order by itself, in the transaction that records the failure', async () => {
    const p = await partnerWith({ online: 5_000 });
    const { id, price } = await rcaDraft(h, offer, p, { vehicle: '100000010' });
    expect((await pay(id, p)).status).toBe(200);
    const refunded = await h.waitForStatus(id, 'refunded', { creds: p });
    expect(refunded.body.failure_reason).toBe(
      'The provider refused to issue the policy: the rca provider refused the vehicle (sandbox test vehicle).',
    );
    expect((await balance(h, p)).wallets.online).toBe(5_000);
    const detail = await h.admin<Detail>('GET', `/admin/orders/${id}`);
    expect(detail.body.history.map((e) => e.to)).toEqual(['draft', 'paid', 'failed', 'refunded']);
    expect(detail.body.ledger.map((e) => [e.kind, e.wallet, e.amount])).toEqual([
      ['payment', 'online', -price],
      ['refund', 'online', price],
    ]);
    expect(detail.body.refund).toMatchObject({ method: 'wallet', status: 'settled', actor: 'system' });
    // Nothing is left for the operator to refund.
    expect((await h.admin('POST', `/admin/orders/${id}/refund`, { reason: 'again' })).status).toBe(409);
    expect((await h.call('get-order', { id }, p)).body.status).toBe('refunded');
  });

  it('records a customer-paid refund for the operator to settle, and refuses drafts and unknown orders', async () => {
    const p = await h.newPartner();
    const { id, price } = await rcaDraft(h, offer, p);
    const draft = await h.admin('POST', `/admin/orders/${id}/refund`, { reason: 'x' });
    expect(draft.status).toBe(409);
    expect(draft.body).toMatchObject({
      statusCode: 409,
      error: expect.stringMatching(/not refundable \(status draft\)/),
    });
    expect(draft.body.message).toBe(draft.body.error);
    expect((await h.admin('POST', '/admin/orders/IAI000000QQQ/refund', { reason: 'x' })).status).toBe(404);
    expect((await h.admin('POST', `/admin/orders/${id}/refund`, {})).status).toBe(400);

    expect(
      (await h.call('confirm-order', { id, payment: payment(price, { paid_at: CLOCK_MS }) }, p)).status,
    ).toBe(200);
    await h.waitForStatus(id, 'completed', { creds: p });
    expect((await h.admin('POST', `/admin/orders/${id}/refund`, { reason: 'returned' })).status).toBe(200);
    const detail = await h.admin<Detail>('GET', `/admin/orders/${id}`);
    expect(detail.body.status).toBe('refunded');
    expect(detail.body.refund).toMatchObject({
      method: 'customer',
      status: 'to_settle',
      amount: price,
      settled_at: null,
    });
    expect(detail.body.ledger).toEqual([]);
  });
});

describe('operator: statement and reconciliation', () => {
  it('lists the period with running balances per sub-wallet, opening and closing, in JSON and CSV', async () => {
    const p = await h.newPartner();
    await h.setClock('2026-11-20T12:00:00+02:00');
    try {
      await credit(h, p.id, 'online', 10_000, 'w-1');
      await credit(h, p.id, 'promo', 100, 'p-1');
    } finally {
      await h.setClock(`${TODAY}T10:00:00+02:00`);
    }
    await credit(h, p.id, 'online', 500, 'w-2');
    const { id, price } = await rcaDraft(h, offer, p);
    expect((await pay(id, p)).status).toBe(200);

    const url = `/admin/partners/${p.id}/wallet/statement?from=${TODAY}&to=${TODAY}`;
    const s = await h.admin<Statement>('GET', url);
    expect(s.status, JSON.stringify(s.body)).toBe(200);
    expect(s.body).toMatchObject({
      partner_id: p.id,
      from: TODAY,
      to: TODAY,
      opening: { online: 10_000, promo: 100, insurance: 0 },
    });
    const online = 10_500 - price;
    expect(s.body.entries.map((e) => [e.wallet, e.kind, e.amount, e.balance_after, e.order_id])).toEqual([
      ['online', 'credit', 500, 10_500, null],
      ['online', 'payment', -price, online, id],
    ]);
    expect(s.body.closing).toEqual({ online, promo: 100, insurance: 0 });
    expect((await balance(h, p)).wallets).toEqual(s.body.closing);

    const all = await h.admin<Statement>(
      'GET',
      `/admin/partners/${p.id}/wallet/statement?from=2026-11-01&to=${TODAY}`,
    );
    expect(all.body.opening).toEqual({ online: 0, promo: 0, insurance: 0 });
    expect(all.body.entries).toHaveLength(4);

    const csv = await h.service.app.inject({
      method: 'GET',
      url: `${url}&format=csv`,
      headers: { authorization: `Bearer ${h.adminToken}` },
    });
    expect(csv.statusCode).toBe(200);
    expect(csv.headers['content-type']).toMatch(/^text\/csv/);
    // The CSV text goes out as it is: the route's response schema serialises only its JSON answer.
    expect(csv.body.startsWith('date,wallet,')).toBe(true);
    expect(csv.headers['content-disposition']).toBe(
      `attachment; filename="statement-${p.id}-${TODAY}-${TODAY}.csv"`,
    );
    const rows = csv.body.trim().split('\r\n');
    expect(rows[0]).toBe('date,wallet,kind,amount,balance,order_id,reference,actor,entry_id');
    expect(rows).toContain(`${TODAY},online,opening,,10000,,,,`);
    expect(rows.some((r) => r.includes(`,online,payment,${-price},${online},${id},`))).toBe(true);
    expect(rows.at(-3)).toBe(`${TODAY},online,closing,,${online},,,,`);

    expect(
      (await h.admin('GET', `/admin/partners/${p.id}/wallet/statement?from=${TODAY}&to=2026-11-01`)).status,
    ).toBe(400);
    expect(
      (await h.admin('GET', `/admin/partners/${p.id}/wallet/statement?from=21.11.2026&to=${TODAY}`)).status,
    ).toBe(400);
    expect(
      (await h.admin('GET', `/admin/partners/nobody/wallet/statement?from=${TODAY}&to=${TODAY}`)).status,
    ).toBe(404);
  });

  it('finds nothing wrong after all of the above, and names a wallet that drifts from its ledger', async () => {
    const clean = await reconcile(h.service.svc.db);
    expect(clean.differences).toEqual([]);
    expect(clean.checked.orders).toBeGreaterThan(5);

    const p = await partnerWith({ online: 10 });
    const db = h.service.svc.db;
    await db.updateTable('wallets').set({ online: 1001 }).where('partner_id', '=', p.id).execute();
    try {
      const dirty = await reconcile(db);
      expect(dirty.differences).toEqual([
        {
          kind: 'wallet',
          subject: `${p.id}/online`,
          problem: 'balance 1001 bani but ledger sums to 1000 bani',
        },
      ]);
    } finally {
      await db.updateTable('wallets').set({ online: 1000 }).where('partner_id', '=', p.id).execute();
    }
  });
});

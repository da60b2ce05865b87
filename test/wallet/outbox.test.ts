import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { dispatchQueuedIssuance } from '../../src/app/issuance-queue.ts';
import { SPENDING_KEY } from '../../src/app/admin/settings.ts';
import { findOrder } from '../../src/db/repos/orders.ts';
import { payTogether } from '../../src/app/wallet-payment-batches.ts';
import { reconcile } from '../../src/app/reconcile.ts';
import {
  payDraftFromWallet,
  payDraftsFromWalletInTurn,
  type DraftToPay,
  type WalletPaymentTerms,
} from '../../src/db/repos/wallet-payments.ts';
import { startHarness, type Creds, type Harness } from '../support/harness.ts';
import { credit, rcaDraft, rcaOffers, type RcaOffer } from './support.ts';

/**
 * The wallet payment as one self-committing statement, and the issuance outbox it queues the order
 * in. The statement is called directly here, as a payment that lost a race would meet it.
 */
let h: Harness;
let offer: RcaOffer;

beforeAll(async () => {
  h = await startHarness();
  offer = (await rcaOffers(h))[0]!;
}, 60_000);
afterAll(() => h?.close());

async function partnerWith(online: number): Promise<Creds> {
  const p = await h.newPartner();
  if (online > 0) await credit(h, p.id, 'online', online);
  return p;
}

/** Everything the payment could have touched for this order and partner. */
async function footprint(orderId: string, partnerId: string) {
  const { rows } = await sql<Record<string, unknown>>`
    select (select status from orders where id = ${orderId}) as status,
           (select payment from orders where id = ${orderId}) as payment,
           (select online from wallets where partner_id = ${partnerId}) as online,
           (select count(*)::int from ledger_entries where order_id = ${orderId}) as entries,
           (select count(*)::int from order_events where order_id = ${orderId}) as events,
           (select count(*)::int from issuance_outbox where order_id = ${orderId}) as queued`.execute(
    h.service.svc.db,
  );
  return rows[0]!;
}

const termsOf = (partnerId: string, rules: Partial<WalletPaymentTerms> = {}): WalletPaymentTerms => ({
  partnerId,
  spendingKey: SPENDING_KEY,
  eligible: ['rca'],
  windows: new Map(),
  reason: 'wallet payment',
  actor: `partner:${partnerId}`,
  ...rules,
});

const payNow = (
  partnerId: string,
  orderId: string,
  at = new Date(),
  rules: Partial<WalletPaymentTerms> = {},
) => payDraftFromWallet(h.service.svc.db, termsOf(partnerId, rules), draft(orderId, at));

const bani = (mdl: number) => Math.round(mdl * 100);

describe('the wallet payment statement', () => {
  it('moves the draft to paid, debits, books the entry its receipt names and queues the order, all at once', async () => {
    const p = await partnerWith(10_000);
    const d = await rcaDraft(h, offer, p);
    const paid = await payNow(p.id, d.id);
    expect(paid).toMatchObject({ outcome: 'paid', wallet: 'online', entryId: expect.any(Number) });
    const after = await footprint(d.id, p.id);
    expect(after).toMatchObject({ status: 'paid', entries: 1, events: 2, queued: 1 });
    expect(Number(after.online)).toBe(bani(10_000) - bani(d.price));
    const payment = {
      transaction_id: `wallet:${d.id}`,
      amount_bani: bani(d.price),
      currency: 'MDL',
      receipt_id: `wallet:${paid.outcome === 'paid' && paid.entryId}`,
      wallet: 'online',
    };
    expect(after.payment).toMatchObject(payment);
    // The paid order as the statement answers it is the row as stored.
    expect(paid.outcome === 'paid' && paid.order).toEqual(await findOrder(h.service.svc.db, d.id));
  });

  it('changes nothing on an order that is no longer a draft (a payment that lost the race)', async () => {
    const p = await partnerWith(10_000);
    const d = await rcaDraft(h, offer, p);
    await payNow(p.id, d.id);
    const before = await footprint(d.id, p.id);
    expect(await payNow(p.id, d.id)).toEqual({ outcome: 'refused' });
    expect(await footprint(d.id, p.id)).toEqual(before);
  });

  it('changes nothing on a draft past its expiry or another partner’s draft', async () => {
    const p = await partnerWith(10_000);
    const other = await partnerWith(10_000);
    const d = await rcaDraft(h, offer, p);
    const before = await footprint(d.id, p.id);
    expect(await payNow(p.id, d.id, new Date(Date.now() + 2 * 86_400_000))).toEqual({ outcome: 'refused' });
    expect(await payNow(other.id, d.id)).toEqual({ outcome: 'refused' });
    expect(await footprint(d.id, p.id)).toEqual(before);
  });

  it('changes nothing when a check before the balance refuses: no wallet, spending off, a product not eligible or outside its payability window', async () => {
    const p = await partnerWith(10_000);
    const d = await rcaDraft(h, offer, p);
    const before = await footprint(d.id, p.id);
    const created = (await findOrder(h.service.svc.db, d.id))!.created_at.getTime();
    const refusals: Partial<WalletPaymentTerms>[] = [
      { eligible: ['medical', 'vignette:ro'] },
      { eligible: [] },
      { windows: new Map([['rca', { from: created + 1, until: Infinity }]]) },
      { windows: new Map([['rca', { from: -Infinity, until: created }]]) },
    ];
    for (const rules of refusals) {
      expect(await payNow(p.id, d.id, new Date(), rules), JSON.stringify(rules)).toEqual({
        outcome: 'refused',
      });
    }
    // A window that holds the creation time, or another product's window, does not refuse.
    const holding = new Map([
      ['rca', { from: created, until: created + 1 }],
      ['vignette:ro', { from: created + 1, until: Infinity }],
    ]);
    const spending = (on: boolean) => h.admin('PUT', '/admin/settings', { balance_spending_enabled: on });
    expect((await spending(false)).status).toBe(200);
    try {
      expect(await payNow(p.id, d.id, new Date(), { windows: holding })).toEqual({ outcome: 'refused' });
    } finally {
      await spending(true);
    }
    expect(await footprint(d.id, p.id)).toEqual(before);
    const walletless = await h.newPartner({ wallet: false });
    const theirs = await rcaDraft(h, offer, walletless);
    expect(await payNow(walletless.id, theirs.id)).toEqual({ outcome: 'refused' });
    expect((await payNow(p.id, d.id, new Date(), { windows: holding })).outcome).toBe('paid');
  });

  it('pays a free order from promo without debiting or booking anything: its receipt is wallet:0', async () => {
    const p = await partnerWith(10_000);
    const d = await rcaDraft(h, offer, p);
    await sql`update orders set price = 0 where id = ${d.id}`.execute(h.service.svc.db);
    const paid = await payNow(p.id, d.id);
    expect(paid).toMatchObject({ outcome: 'paid', wallet: 'promo', entryId: null });
    const after = await footprint(d.id, p.id);
    expect(after).toMatchObject({ status: 'paid', entries: 0, events: 2, queued: 1 });
    expect(Number(after.online)).toBe(bani(10_000));
    expect(after.payment).toMatchObject({ amount_bani: 0, receipt_id: 'wallet:0', wallet: 'promo' });
  });

  it('changes nothing when no sub-wallet covers the price', async () => {
    const p = await partnerWith(1);
    const d = await rcaDraft(h, offer, p);
    const before = await footprint(d.id, p.id);
    expect(await payNow(p.id, d.id)).toEqual({ outcome: 'insufficient' });
    expect(await footprint(d.id, p.id)).toEqual(before);
  });
});

const draft = (orderId: string, at = new Date()): DraftToPay => ({
  orderId,
  payment: { transaction_id: `wallet:${orderId}`, paid_at: at.getTime(), currency: 'MDL' },
  at,
});

describe('a batch of one partner’s wallet payments in one statement', () => {
  it('judges each payment on the balances the earlier ones left, in the jobs’ order, and books each entry in that order', async () => {
    const p = await h.newPartner();
    const other = await partnerWith(10_000);
    const [d1, d2, d3, d4] = [
      await rcaDraft(h, offer, p),
      await rcaDraft(h, offer, p),
      await rcaDraft(h, offer, p),
      await rcaDraft(h, offer, p),
    ];
    const theirs = await rcaDraft(h, offer, other);
    const price = bani(d1!.price);
    // promo covers one payment, online one and a half.
    await credit(h, p.id, 'promo', price / 100);
    await credit(h, p.id, 'online', (price + Math.floor(price / 2)) / 100);
    // Their orders' footprint, without the wallet the batch debits.
    const untouched = () =>
      Promise.all(
        [d3!, d4!, theirs].map(async (d) => {
          const { online: _, ...rest } = await footprint(d.id, p.id);
          return rest;
        }),
      );
    const before = await untouched();

    // d1 twice, another partner's draft, then three drafts for the one and a half left in online.
    const answers = await payDraftsFromWalletInTurn(h.service.svc.db, termsOf(p.id), [
      draft(d1!.id),
      draft(d1!.id),
      draft(theirs.id),
      draft(d2!.id),
      draft(d3!.id),
      draft(d4!.id),
    ]);
    expect(answers.map((a) => a.outcome)).toEqual([
      'paid',
      'refused',
      'refused',
      'paid',
      'insufficient',
      'insufficient',
    ]);
    expect(answers[0]).toMatchObject({ wallet: 'promo' });
    expect(answers[3]).toMatchObject({ wallet: 'online' });
    const e1 = answers[0]!.outcome === 'paid' ? answers[0]!.entryId! : 0;
    const e2 = answers[3]!.outcome === 'paid' ? answers[3]!.entryId! : 0;
    expect(e2).toBeGreaterThan(e1);

    // Each paid order as answered is the row as stored, its receipt naming its entry.
    for (const [a, d] of [
      [answers[0]!, d1!],
      [answers[3]!, d2!],
    ] as const) {
      expect(a.outcome === 'paid' && a.order).toEqual(await findOrder(h.service.svc.db, d.id));
      const after = await footprint(d.id, p.id);
      expect(after).toMatchObject({ status: 'paid', entries: 1, events: 2, queued: 1 });
      expect(after.payment).toMatchObject({
        amount_bani: price,
        receipt_id: `wallet:${a.outcome === 'paid' && a.entryId}`,
      });
    }
    const entries = await h.service.svc.db
      .selectFrom('ledger_entries')
      .select(['id', 'wallet', 'amount', 'balance_after', 'order_id'])
      .where('partner_id', '=', p.id)
      .where('kind', '=', 'payment')
      .orderBy('id')
      .execute();
    expect(entries).toEqual([
      { id: e1, wallet: 'promo', amount: -price, balance_after: 0, order_id: d1!.id },
      { id: e2, wallet: 'online', amount: -price, balance_after: Math.floor(price / 2), order_id: d2!.id },
    ]);
    const wallet = await h.service.svc.db
      .selectFrom('wallets')
      .select(['promo', 'online'])
      .where('partner_id', '=', p.id)
      .executeTakeFirstOrThrow();
    expect(wallet).toEqual({ promo: 0, online: Math.floor(price / 2) });
    // What was refused or not covered is untouched, and the books reconcile.
    expect(await untouched()).toEqual(before);
    expect((await reconcile(h.service.svc.db)).differences).toEqual([]);
  });

  it('books the entries of one sub-wallet in the jobs’ order, not the orders’ id order, and refuses ids that are no order of any kind', async () => {
    const p = await h.newPartner();
    const drafts: { id: string; price: number }[] = [];
    for (let i = 0; i < 6; i++) drafts.push(await rcaDraft(h, offer, p));
    const total = drafts.reduce((sum, d) => sum + bani(d.price), 0);
    await credit(h, p.id, 'online', total / 100);
    // Ids sorted one way, paid the other: the statement locks by id and must book by arrival.
    const arrival = [...drafts].sort((a, b) => (a.id < b.id ? 1 : -1));
    const odd = [`x'"\\é😀`, 'NO-SUCH-ORDER'];
    const answers = await payDraftsFromWalletInTurn(h.service.svc.db, termsOf(p.id), [
      draft(odd[0]!),
      ...arrival.map((d) => draft(d.id)),
      draft(odd[1]!),
    ]);
    expect(answers.map((a) => a.outcome)).toEqual(['refused', ...arrival.map(() => 'paid'), 'refused']);
    const entries = await h.service.svc.db
      .selectFrom('ledger_entries')
      .select(['order_id', 'balance_after'])
      .where('partner_id', '=', p.id)
      .where('kind', '=', 'payment')
      .orderBy('id')
      .execute();
    expect(entries.map((e) => e.order_id)).toEqual(arrival.map((d) => d.id));
    let left = total;
    expect(entries.map((e) => e.balance_after)).toEqual(arrival.map((d) => (left -= bani(d.price))));
    expect(left).toBe(0);
    expect((await reconcile(h.service.svc.db)).differences).toEqual([]);
  });

  it('a batch whose statement fails runs each payment alone: only the payment that failed it fails', async () => {
    const p = await partnerWith(10_000);
    const drafts = [await rcaDraft(h, offer, p), await rcaDraft(h, offer, p), await rcaDraft(h, offer, p)];
    const booking = (orderId: string, at = new Date()) => ({
      terms: termsOf(p.id),
      draft: draft(orderId, at),
    });
    // An instant that is no time fails the batch (before it reaches the server), then its own payment alone.
    const results = await payTogether(h.service.svc.db, [
      booking(drafts[0]!.id),
      booking(drafts[1]!.id, new Date(Number.NaN)),
      booking(drafts[2]!.id),
    ]);
    expect(results.map((r) => (r.ok ? r.value.outcome : 'failed'))).toEqual(['paid', 'failed', 'paid']);
    expect((await footprint(drafts[1]!.id, p.id)).status).toBe('draft');
    expect((await reconcile(h.service.svc.db)).differences).toEqual([]);
  });

  it('pays payments judged by other terms (a payability window that closed between them) in statements of their own', async () => {
    const p = await partnerWith(10_000);
    const drafts = [await rcaDraft(h, offer, p), await rcaDraft(h, offer, p), await rcaDraft(h, offer, p)];
    const created = (await findOrder(h.service.svc.db, drafts[1]!.id))!.created_at.getTime();
    // The window closed before the second draft was made: under these terms it is refused.
    const closed = termsOf(p.id, { windows: new Map([['rca', { from: -Infinity, until: created }]]) });
    const results = await payTogether(h.service.svc.db, [
      { terms: termsOf(p.id), draft: draft(drafts[0]!.id) },
      { terms: closed, draft: draft(drafts[1]!.id) },
      { terms: termsOf(p.id), draft: draft(drafts[2]!.id) },
    ]);
    expect(results.map((r) => (r.ok ? r.value.outcome : 'failed'))).toEqual(['paid', 'refused', 'paid']);
    expect((await footprint(drafts[1]!.id, p.id)).status).toBe('draft');
    // The two under the same terms were paid by one statement: their ledger entries share a transaction.
    const { rows } = await sql<{ tx: string }>`
      select xmin::text as tx from ledger_entries where order_id in (${drafts[0]!.id}, ${drafts[2]!.id})`.execute(
      h.service.svc.db,
    );
    expect(rows).toHaveLength(2);
    expect(rows[0]!.tx).toBe(rows[1]!.tx);
  });
});

describe('the issuance outbox', () => {
  it('creates one issue-order job per queued order and empties itself', async () => {
    const p = await partnerWith(10_000);
    const drafts = [await rcaDraft(h, offer, p), await rcaDraft(h, offer, p)];
    for (const d of drafts) await payNow(p.id, d.id);
    await h.service.outbox.flush();
    await h.service.outbox.flush();
    const { rows } = await sql<{ order_id: string; jobs: number }>`
      select o.id as order_id,
             (select count(*)::int from pgboss.job j where j.name = 'issue-order' and j.data->>'orderId' = o.id) as jobs
      from orders o where o.id in (${drafts[0]!.id}, ${drafts[1]!.id}) order by o.id`.execute(
      h.service.svc.db,
    );
    expect(rows.map((r) => r.jobs)).toEqual([1, 1]);
    const queued = await sql<{ n: number }>`select count(*)::int as n from issuance_outbox`.execute(
      h.service.svc.db,
    );
    expect(queued.rows[0]!.n).toBe(0);
  });

  it('gives each order exactly one job when several dispatchers take from the outbox at once', async () => {
    const p = await partnerWith(100_000);
    const drafts = [];
    for (let i = 0; i < 12; i++) drafts.push(await rcaDraft(h, offer, p));
    // Queued by the statement alone (no kick), then taken by four dispatches on four sessions at once.
    for (const d of drafts) await payNow(p.id, d.id);
    const taken = await Promise.all(Array.from({ length: 4 }, () => dispatchQueuedIssuance(h.service.svc)));
    expect(taken.reduce((a, b) => a + b, 0)).toBeLessThanOrEqual(drafts.length);
    await h.service.outbox.flush();
    const ids = drafts.map((d) => d.id);
    const { rows } = await sql<{ n: number }>`
      select (select count(*)::int from pgboss.job j where j.name = 'issue-order' and j.data->>'orderId' = o.id) as n
      from unnest(${ids}::text[]) as o(id)`.execute(h.service.svc.db);
    expect(rows.map((r) => r.n)).toEqual(ids.map(() => 1));
  });

  it('issues an order queued by a process that died before creating its job: the next poll finds it', async () => {
    const p = await partnerWith(10_000);
    const d = await rcaDraft(h, offer, p);
    // Paid and queued, and nothing kicked: as if the process had died right after the commit.
    expect((await payNow(p.id, d.id)).outcome).toBe('paid');
    await h.waitForStatus(d.id, 'completed', { creds: p });
  });
});

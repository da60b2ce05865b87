import { Writable } from 'node:stream';
import fc from 'fast-check';
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { payOrderFromWallet } from '../../src/app/pay-order-from-wallet.ts';
import { payableWindows } from '../../src/app/payability.ts';
import { reconcile } from '../../src/app/reconcile.ts';
import { DomainError } from '../../src/domain/errors.ts';
import { createLogger } from '../../src/log.ts';
import type { OrderStatus } from '../../src/domain/order-state.ts';
import { booksEntry, RECEIPT_PREFIX, walletVerdict, type SpendableWallet } from '../../src/domain/wallet.ts';
import type { PartnerRow } from '../../src/db/schema.ts';
import { payment, rcaItem, startHarness, type Creds, type Harness } from '../support/harness.ts';
import { credit, rcaOffers, reasonError, type RcaOffer } from './support.ts';

/**
 * One partner's wallet payments, one at a time and as one batch, against the wallet's rules
 * (src/domain/wallet.ts; decision 0065). Each generated case (the wallet's balances, the spending
 * switch, orders of any price, products, status, age and owner, and the payments' order of
 * arrival, repeats and unknown ids included) is built twice from scratch. One copy is paid one
 * request at a time through pay-order-from-balance, so each payment takes the single statement; the
 * other through the same use case with every payment arriving while another of the partner's runs,
 * so they go together as one batch statement in that order. The two must give the same answers and
 * leave the same orders, events, outbox, ledger and balances, and both must be what the rules say
 * when they are run over the same case. Issuance is off: nothing else moves the orders or the wallet.
 */
let h: Harness;
let offer: RcaOffer;
/** What the service logged at warn and above: a batch statement that failed and fell back says so. */
const logged: string[] = [];
const fallbacks = () => logged.filter((line) => line.includes('a batch of wallet payments failed'));

const NOW_ISO = '2026-11-21T10:00:00+02:00';
const NOW = Date.parse(NOW_ISO);
/** A creation time under the RO vignette's old tariff, whose drafts can no longer be paid (decision 0010). */
const OLD = Date.parse('2026-09-30T12:00:00+03:00');
const EXPIRED_AT = NOW - 3_600_000;

beforeAll(async () => {
  const sink = new Writable({
    write(chunk, _encoding, done) {
      logged.push(String(chunk));
      done();
    },
  });
  h = await startHarness({ workers: false, logger: createLogger('warn', sink) });
  await h.setClock(NOW_ISO);
  offer = (await rcaOffers(h))[0]!;
}, 60_000);
afterAll(() => h?.close());

type Product = 'rca' | 'road-tax' | 'vignette:ro';
interface OrderSpec {
  price: number;
  products: Product[];
  state: 'draft' | 'paid' | 'expired';
  mine: boolean;
  old: boolean;
}
interface Case {
  /** null: the partner has no wallet. Bani. */
  wallet: { promo: number; online: number } | null;
  spending: boolean;
  orders: OrderSpec[];
  /** The payments in their order of arrival, by index in `orders`; `orders.length` names no order. */
  arrivals: number[];
}

// Few amounts, so that balances meet prices exactly, fall just short, or cover two at once.
const PRICES = [0, 100, 250, 400, 650];
const orderArb: fc.Arbitrary<OrderSpec> = fc.record({
  price: fc.constantFrom(...PRICES),
  products: fc.array(fc.constantFrom<Product>('rca', 'rca', 'road-tax', 'vignette:ro'), {
    minLength: 1,
    maxLength: 2,
  }),
  state: fc.constantFrom<OrderSpec['state']>('draft', 'draft', 'draft', 'paid', 'expired'),
  mine: fc.constantFrom(true, true, true, false),
  old: fc.boolean(),
});
const caseArb: fc.Arbitrary<Case> = fc
  .record({
    wallet: fc.option(
      fc.record({ promo: fc.constantFrom(0, ...PRICES, 1000), online: fc.constantFrom(0, ...PRICES, 1000) }),
      { freq: 8, nil: null },
    ),
    spending: fc.constantFrom(true, true, true, true, true, true, true, false),
    orders: fc.array(orderArb, { minLength: 1, maxLength: 6 }),
  })
  .chain((c) =>
    fc
      .array(fc.nat(c.orders.length), { minLength: 1, maxLength: 10 })
      .map((arrivals): Case => ({ ...c, arrivals })),
  );

interface World {
  self: Creds;
  /** The partner that owns the case's orders that are not `mine`. */
  other: Creds;
  partner: PartnerRow;
  /** The orders' ids, in the case's order. */
  ids: string[];
}

const idOf = (w: World, k: number) => w.ids[k] ?? `NOPE${w.self.id.slice(0, 8)}`;

/** The case made real: its partners, wallet and orders, each order as the case says. */
async function build(c: Case): Promise<World> {
  const db = h.service.svc.db;
  const self = await h.newPartner({ wallet: c.wallet !== null });
  const other = await h.newPartner();
  for (const sub of ['promo', 'online'] as const) {
    if (c.wallet && c.wallet[sub] > 0) await credit(h, self.id, sub, c.wallet[sub] / 100);
  }
  const ids: string[] = [];
  for (const [k, o] of c.orders.entries()) {
    const owner = o.mine ? self : other;
    const created = await h.call<{ id: string }>(
      'create-order',
      {
        customer: { phone: '+37369000000' },
        products: o.products.map(() => rcaItem(offer.min_start_date, { insurance_company: offer.company })),
      },
      owner,
    );
    expect(created.status, JSON.stringify(created.body)).toBe(200);
    const id = created.body.id;
    await sql`update orders set price = ${o.price} where id = ${id}`.execute(db);
    if (o.state === 'paid') {
      const paid = await h.call(
        'confirm-order',
        {
          id,
          payment: payment(o.price / 100, { paid_at: NOW, receipt_id: `R${k}`, transaction_id: `T${k}` }),
        },
        owner,
      );
      expect(paid.status, JSON.stringify(paid.body)).toBe(200);
    }
    await sql`update order_items set product = (${o.products}::text[])[idx + 1] where order_id = ${id}`.execute(
      db,
    );
    if (o.old) await sql`update orders set created_at = ${new Date(OLD)} where id = ${id}`.execute(db);
    if (o.state === 'expired') {
      await sql`update orders set expires_at = ${new Date(EXPIRED_AT)} where id = ${id}`.execute(db);
    }
    ids.push(id);
  }
  const partner = await db
    .selectFrom('partners')
    .selectAll()
    .where('id', '=', self.id)
    .executeTakeFirstOrThrow();
  return { self, other, partner, ids };
}

interface Answer {
  status: number;
  body: unknown;
}

const WIRE: Partial<Record<DomainError['code'], number>> = {
  bad_request: 400,
  forbidden: 403,
  not_found: 404,
};

/** Each payment on its own request, after the one before it answered: each takes the single statement. */
async function oneAtATime(w: World, c: Case): Promise<Answer[]> {
  const answers: Answer[] = [];
  for (const k of c.arrivals) {
    const res = await h.call('pay-order-from-balance', { id: idOf(w, k) }, w.self);
    answers.push({ status: res.status, body: res.body });
  }
  return answers;
}

/**
 * Every payment at once, through the use case the route calls, in the case's order: the first
 * (for no order) runs alone and the case's payments arrive while it runs, so they are booked
 * together, as one statement, in that order.
 */
async function together(w: World, c: Case): Promise<Answer[]> {
  const svc = h.service.svc;
  const first = payOrderFromWallet(svc, w.partner, `NOPE${w.self.id.slice(0, 8)}`).catch(() => undefined);
  const answers = c.arrivals.map((k) =>
    payOrderFromWallet(svc, w.partner, idOf(w, k)).then(
      (view): Answer => ({ status: 200, body: JSON.parse(JSON.stringify(view)) }),
      (err: unknown): Answer => {
        const status = err instanceof DomainError ? WIRE[err.code] : undefined;
        if (status === undefined || !(err instanceof DomainError)) return { status: 500, body: String(err) };
        return { status, body: reasonError(status, err.reason) };
      },
    ),
  );
  await first;
  return Promise.all(answers);
}

/** Ids and times replaced by what they stand for, so that two worlds compare. */
function normal(w: World, value: unknown): unknown {
  let text = JSON.stringify(value);
  w.ids.forEach((id, k) => (text = text.replaceAll(id, `#${k}`)));
  return JSON.parse(text.replaceAll(w.self.id, 'self').replaceAll(w.other.id, 'other'));
}

/** Everything a payment may change, for the case's partner and orders. */
async function footprint(w: World) {
  const db = h.service.svc.db;
  const wallet =
    (await db
      .selectFrom('wallets')
      .select(['promo', 'online', 'insurance'])
      .where('partner_id', '=', w.self.id)
      .executeTakeFirst()) ?? null;
  const entries = await db
    .selectFrom('ledger_entries')
    .select(['id', 'order_id', 'wallet', 'amount', 'balance_after', 'kind'])
    .where('partner_id', '=', w.self.id)
    .where('kind', '<>', 'credit')
    .orderBy('id')
    .execute();
  const orders = [];
  for (const id of w.ids) {
    const o = await db
      .selectFrom('orders')
      .select(['status', 'payment_method', 'payment'])
      .where('id', '=', id)
      .executeTakeFirstOrThrow();
    const entry = entries.find((e) => e.order_id === id);
    const { paid_at: _, receipt_id, ...paymentRest } = o.payment ?? {};
    const events = await db
      .selectFrom('order_events')
      .select(['from_status', 'to_status', 'reason', 'actor'])
      .where('order_id', '=', id)
      .orderBy('id')
      .execute();
    // Queued for issuance: still in the outbox, or already an issue-order job (workers are off).
    const { rows } = await sql<{ n: number }>`
      select (select count(*)::int from issuance_outbox where order_id = ${id})
           + (select count(*)::int from pgboss.job where name = 'issue-order' and data->>'orderId' = ${id}) as n`.execute(
      db,
    );
    orders.push({
      status: o.status,
      method: o.payment_method,
      payment: paymentRest,
      // A wallet receipt names the order's ledger entry, or 0 when it booked none.
      receipt:
        o.payment_method === 'wallet' ? receipt_id === `${RECEIPT_PREFIX}${entry?.id ?? 0}` : receipt_id,
      events,
      queued: rows[0]!.n,
    });
  }
  const ledger = entries.map(({ id: _, order_id, ...e }) => ({ order: w.ids.indexOf(order_id!), ...e }));
  return normal(w, { wallet, ledger, orders }) as {
    wallet: { promo: number; online: number; insurance: number } | null;
    ledger: { order: number; wallet: string; amount: number; balance_after: number }[];
    orders: { status: OrderStatus }[];
  };
}

/** What the wallet's rules say of the case: each answer, the entries booked, the balances and statuses after. */
function rules(c: Case, w: World) {
  const svc = h.service.svc;
  const balances: Record<SpendableWallet, number> = {
    promo: c.wallet?.promo ?? 0,
    online: c.wallet?.online ?? 0,
  };
  const status: OrderStatus[] = c.orders.map((o) => (o.state === 'paid' ? 'paid' : 'draft'));
  const answers: { status: number; error?: string }[] = [];
  const ledger: { order: number; wallet: string; amount: number; balance_after: number; kind: string }[] = [];
  for (const k of c.arrivals) {
    const o = c.orders[k];
    const verdict = walletVerdict(
      {
        partnerId: 'self',
        hasWallet: c.wallet !== null,
        spendingEnabled: c.spending,
        order: o && {
          partnerId: o.mine ? 'self' : 'other',
          status: status[k]!,
          createdAt: o.old ? OLD : NOW,
          expiresAt: o.state === 'expired' ? EXPIRED_AT : NOW + 3_600_000,
          products: o.products,
          price: o.price,
        },
        windows: payableWindows(svc, w.partner, NOW),
        eligible: svc.catalogue.common.wallet_eligible_products,
        now: NOW,
      },
      balances,
    );
    if ('pay' in verdict) {
      balances[verdict.pay] -= o!.price;
      status[k] = 'paid';
      if (booksEntry(o!.price)) {
        ledger.push({
          order: k,
          wallet: verdict.pay,
          amount: -o!.price,
          balance_after: balances[verdict.pay],
          kind: 'payment',
        });
      }
      answers.push({ status: 200 });
    } else {
      answers.push({ status: WIRE[verdict.error.code]!, error: verdict.error.reason });
    }
  }
  return { answers, ledger, balances, status };
}

const brief = (a: Answer) => {
  const error = (a.body as { error?: unknown }).error;
  return a.status === 200 ? { status: 200 } : { status: a.status, error };
};

async function check(c: Case) {
  const spending = (on: boolean) => h.admin('PUT', '/admin/settings', { balance_spending_enabled: on });
  if (!c.spending) expect((await spending(false)).status).toBe(200);
  try {
    const single = await build(c);
    const batch = await build(c);
    const singleAnswers = await oneAtATime(single, c);
    const batchAnswers = await together(batch, c);
    const expected = rules(c, single);

    expect(normal(batch, batchAnswers), 'the batch answers as the payments one at a time').toEqual(
      normal(single, singleAnswers),
    );
    expect(singleAnswers.map(brief), 'the answers are the rules’').toEqual(expected.answers);
    const after = await footprint(single);
    expect(await footprint(batch), 'the batch leaves what the payments one at a time leave').toEqual(after);
    expect(after.ledger, 'the entries are the rules’').toEqual(expected.ledger);
    expect(after.orders.map((o) => o.status)).toEqual(expected.status);
    if (c.wallet) expect(after.wallet).toEqual({ ...expected.balances, insurance: 0 });
    // Each batch was booked by its own statement, not by the payments again one by one.
    expect(fallbacks()).toEqual([]);
  } finally {
    if (!c.spending) await spending(true);
  }
}

const draft = (price: number, more: Partial<OrderSpec> = {}): OrderSpec => ({
  price,
  products: ['rca'],
  state: 'draft',
  mine: true,
  old: false,
  ...more,
});

describe('one partner’s wallet payments, one at a time and as one batch', () => {
  it('give the same answers, orders, ledger and balances as each other and as the rules, in any order of arrival', async () => {
    await fc.assert(fc.asyncProperty(caseArb, check), {
      numRuns: 40,
      examples: [
        // promo pays while it alone covers the price, then online; then neither; a free order from promo.
        [
          {
            wallet: { promo: 400, online: 650 },
            spending: true,
            orders: [draft(400), draft(250), draft(400), draft(650), draft(0)],
            arrivals: [0, 1, 2, 3, 4],
          },
        ],
        // The same order twice, an unknown id, another partner's order, an expired and a paid one.
        [
          {
            wallet: { promo: 0, online: 1000 },
            spending: true,
            orders: [
              draft(250),
              draft(100, { mine: false }),
              draft(100, { state: 'expired' }),
              draft(100, { state: 'paid' }),
            ],
            arrivals: [0, 0, 4, 1, 2, 3, 0],
          },
        ],
        // Every refusal before the balance: the RO tariff switch (expired too), an ineligible product.
        [
          {
            wallet: { promo: 1000, online: 1000 },
            spending: true,
            orders: [
              draft(100, { products: ['vignette:ro'], old: true }),
              draft(100, { products: ['rca', 'vignette:ro'], old: true, state: 'expired' }),
              draft(100, { products: ['rca', 'road-tax'] }),
              draft(100, { products: ['vignette:ro', 'rca'] }),
            ],
            arrivals: [2, 0, 1, 3],
          },
        ],
        // One order the balance does not cover, paid six times at once: each answer is the balance's.
        [
          {
            wallet: { promo: 0, online: 0 },
            spending: true,
            orders: [draft(250)],
            arrivals: [0, 0, 0, 0, 0, 0],
          },
        ],
      ],
    });
    expect((await reconcile(h.service.svc.db)).differences).toEqual([]);
  }, 300_000);
});

import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { expireDrafts } from '../../src/app/expire-drafts.ts';
import { findOrderWithItems } from '../../src/db/repos/orders.ts';
import { ORDER_STATUSES, TRANSITIONS, type OrderStatus } from '../../src/domain/order-state.ts';
import { payment, RCA_QUOTE, rcaItem, startHarness, type Creds, type Harness } from '../support/harness.ts';

// Workers off: payments stay `paid` (no issuance) and no scheduled sweep races the expiry checks.
let h: Harness;
let offers: { company: string; price: number }[];
const TODAY = '2026-11-21';
const customer = { phone: '+37369000000' };

beforeAll(async () => {
  h = await startHarness({ workers: false });
  await h.setClock(`${TODAY}T12:00:00+02:00`);
  const q = await h.call<{ offers: { company: string; price: number }[] }>('get-offers', RCA_QUOTE);
  offers = q.body.offers;
});
afterAll(() => h?.close());

/** The service clock now: paid_at must be near it, not near the real clock. */
const now = () => h.service.svc.clock.now();
const pay = async (amount: number, over: Record<string, unknown> = {}) =>
  payment(amount, { paid_at: await now(), ...over });

async function draft(creds: Creds = h.demo, n = 1) {
  const res = await h.call<{ id: string; price: number; status: string }>(
    'create-order',
    { customer, products: Array.from({ length: n }, () => rcaItem(TODAY)) },
    creds,
  );
  expect(res.status, JSON.stringify(res.body)).toBe(200);
  return res.body;
}

const stored = (id: string) =>
  h.admin<{ status: string; stored_status: string; created_at: string; payment: unknown }>(
    'GET',
    `/admin/orders/${id}`,
  );

describe('create-order', () => {
  it('takes 1 to 10 products and prices the order as their sum', async () => {
    const one = await h.call('create-order', { customer, products: [rcaItem(TODAY)] });
    expect(one.status).toBe(200);
    expect(one.body.price).toBe(offers.find((o) => o.company === 'moldasig')!.price);

    const ten = Array.from({ length: 10 }, (_, i) =>
      rcaItem(TODAY, { insurance_company: offers[i % offers.length]!.company }),
    );
    const res = await h.call('create-order', { customer, products: ten });
    expect(res.status).toBe(200);
    const sumBani = ten.reduce(
      (s, p) => s + Math.round(offers.find((o) => o.company === p.insurance_company)!.price * 100),
      0,
    );
    expect(res.body.price).toBe(sumBani / 100);
    const detail = await h.admin<{ products: unknown[] }>('GET', `/admin/orders/${res.body.id}`);
    expect(detail.body.products).toHaveLength(10);
  });

  it('takes customer.email as the spec types it, any string (empty too), up to 200 characters', async () => {
    for (const email of ['', 'ion.popescu', 'ion@example.md']) {
      const res = await h.call('create-order', {
        customer: { ...customer, email },
        products: [rcaItem(TODAY)],
      });
      expect(res.status, JSON.stringify(res.body)).toBe(200);
    }
    const long = await h.call('create-order', {
      customer: { ...customer, email: `${'x'.repeat(190)}@example.md` },
      products: [rcaItem(TODAY)],
    });
    expect(long.status).toBe(400);
    expect(long.body.message).toMatch(/email/);
  });

  it('refuses 0 or 11 products with a schema 400', async () => {
    for (const n of [0, 11]) {
      const res = await h.call('create-order', {
        customer,
        products: Array.from({ length: n }, () => rcaItem(TODAY)),
      });
      expect(res.status).toBe(400);
      expect(res.body.message).toMatch(/^body\/products must NOT have (fewer than 1|more than 10) items$/);
    }
  });

  it('refuses the whole order when one product is invalid, and stores nothing', async () => {
    const p = await h.newPartner();
    const res = await h.call(
      'create-order',
      {
        customer,
        products: [rcaItem(TODAY), rcaItem(TODAY, { vehicle: '999999999' }), rcaItem(TODAY)],
      },
      p,
    );
    expect(res.status).toBe(500);
    expect(res.body.message).toBe('[API] Vehicle not found');
    const listed = await h.admin<{ orders: unknown[] }>('GET', `/admin/orders?partner_id=${p.id}`);
    expect(listed.body.orders).toEqual([]);
  });
});

describe('confirm-order', () => {
  it('refuses an amount that is not the price, naming the mismatch', async () => {
    const o = await draft();
    const res = await h.call('confirm-order', { id: o.id, payment: await pay(o.price + 0.01) });
    expect(res.status).toBe(400);
    expect(res.body.error).toMatch(/payment\.amount .* does not match the order price/);
    expect(res.body.message).toBe(res.body.error);
    const fractional = await h.call('confirm-order', { id: o.id, payment: await pay(o.price + 0.001) });
    expect(fractional.status).toBe(400);
    expect(fractional.body.message).toMatch(/payment\.amount/);
    expect((await stored(o.id)).body.stored_status).toBe('draft');
  });

  it('refuses a currency other than MDL', async () => {
    const o = await draft();
    const res = await h.call('confirm-order', { id: o.id, payment: await pay(o.price, { currency: 'EUR' }) });
    expect(res.status).toBe(400);
    expect(res.body.message).toMatch(/payment\.currency must be MDL/);
  });

  it('refuses a paid_at of 12 digits by schema', async () => {
    const o = await draft();
    const res = await h.call('confirm-order', {
      id: o.id,
      payment: await pay(o.price, { paid_at: 999_999_999_999 }),
    });
    expect(res.status).toBe(400);
    expect(res.body.message).toMatch(/^body\/payment\/paid_at must be >= 1000000000000$/);
  });

  it('takes paid_at from 5 minutes before creation to 5 minutes after now, and nothing outside', async () => {
    const o = await draft();
    const created = Date.parse((await stored(o.id)).body.created_at);
    const early = await h.call('confirm-order', {
      id: o.id,
      payment: await pay(o.price, { paid_at: created - 5 * 60_000 - 1 }),
    });
    expect(early.status).toBe(400);
    expect(early.body.message).toMatch(/^payment\.paid_at must be between /);
    const late = await h.call('confirm-order', {
      id: o.id,
      payment: await pay(o.price, { paid_at: (await now()) + 5 * 60_000 + 2_000 }),
    });
    expect(late.status).toBe(400);
    expect(late.body.message).toMatch(/^payment\.paid_at must be between /);

    const atEarliest = await h.call('confirm-order', {
      id: o.id,
      payment: await pay(o.price, { paid_at: created - 5 * 60_000 }),
    });
    expect(atEarliest.status).toBe(200);
    const o2 = await draft();
    const nearLatest = await h.call('confirm-order', {
      id: o2.id,
      payment: await pay(o2.price, { paid_at: (await now()) + 4 * 60_000 }),
    });
    expect(nearLatest.status).toBe(200);
  });

  it('answers a retry of the same payment with 200 and another payment with 400', async () => {
    const o = await draft();
    const p = await pay(o.price, { pos_id: 'POS-7' });
    const first = await h.call('confirm-order', { id: o.id, payment: p });
    expect(first.status).toBe(200);
    expect(first.body).toMatchObject({ id: o.id, status: 'paid', price: o.price, currency: 'MDL' });
    const again = await h.call('confirm-order', { id: o.id, payment: p });
    expect(again.status).toBe(200);
    expect(again.body).toEqual(first.body);

    for (const other of [
      { ...p, transaction_id: 'TX-other' },
      { ...p, receipt_id: 'RRN-other' },
    ]) {
      const res = await h.call('confirm-order', { id: o.id, payment: other });
      expect(res.status).toBe(400);
      expect(res.body).toMatchObject({
        error: 'Order is not payable (status paid)',
        message: 'Order is not payable (status paid)',
      });
    }
    const detail = await stored(o.id);
    expect(detail.body.payment).toEqual({ ...p, currency: 'MDL' });
  });

  it("reports another partner's order as not found on get-order and confirm-order", async () => {
    const o = await draft();
    const other = await h.newPartner();
    const read = await h.call('get-order', { id: o.id }, other);
    expect(read).toMatchObject({ status: 404, body: { error: 'Order not found' } });
    const conf = await h.call('confirm-order', { id: o.id, payment: await pay(o.price) }, other);
    expect(conf).toMatchObject({ status: 404, body: { error: 'Order not found' } });
    expect((await stored(o.id)).body.stored_status).toBe('draft');
    const unknown = await h.call('confirm-order', { id: 'IAI000000AAA', payment: await pay(1) });
    expect(unknown).toMatchObject({ status: 404, body: { error: 'Order not found' } });
  });
});

describe('draft expiry at 23:59:59 Europe/Chisinau', () => {
  it('pays until 23:59:58, reads expired from 23:59:59 before any sweep, and the sweep persists it', async () => {
    await h.setClock(`${TODAY}T23:59:00+02:00`);
    const a = await draft();
    const b = await draft();

    await h.setClock(`${TODAY}T23:59:58+02:00`);
    const paidAt = Date.parse(`${TODAY}T23:59:58+02:00`);
    const paid = await h.call('confirm-order', { id: a.id, payment: payment(a.price, { paid_at: paidAt }) });
    expect(paid.status).toBe(200);
    expect(paid.body.status).toBe('paid');

    await h.setClock(`${TODAY}T23:59:59+02:00`);
    const read = await h.call('get-order', { id: b.id });
    expect(read.body.status).toBe('expired');
    const conf = await h.call('confirm-order', {
      id: b.id,
      payment: payment(b.price, { paid_at: paidAt + 1000 }),
    });
    expect(conf.status).toBe(400);
    expect(conf.body).toMatchObject({
      error: 'Order is not payable (status expired)',
      message: 'Order is not payable (status expired)',
    });
    const before = await stored(b.id);
    expect(before.body).toMatchObject({ status: 'expired', stored_status: 'draft' });

    expect(await expireDrafts(h.service.svc)).toBeGreaterThanOrEqual(1);
    const after = await stored(b.id);
    expect(after.body).toMatchObject({ status: 'expired', stored_status: 'expired' });
    expect((await stored(a.id)).body.stored_status).toBe('paid');
    await h.setClock(`${TODAY}T12:00:00+02:00`);
  });
});

describe('get-order reads in batches', () => {
  /** The service's database, counting the statements sent through it (its own batches: a new object). */
  const counted = () => {
    const db = h.service.database.db;
    const sent = { statements: 0 };
    const proxy = new Proxy(db, {
      get(target, prop, receiver) {
        if (prop === 'executeQuery') {
          return (...args: Parameters<typeof db.executeQuery>) => {
            sent.statements++;
            return target.executeQuery(...args);
          };
        }
        return Reflect.get(target, prop, receiver) as unknown;
      },
    });
    return { db: proxy, sent };
  };

  it('answers every read of one turn from one statement, each its own order, an unknown id none', async () => {
    const a = await draft();
    const b = await draft(h.demo, 3);
    const { db, sent } = counted();
    const ids = [a.id, b.id, 'IAI000000AAA', a.id];
    const found = await Promise.all(ids.map((id) => findOrderWithItems(db, id)));
    expect(sent.statements).toBe(1);
    expect(found.map((f) => f?.order.id)).toEqual([a.id, b.id, undefined, a.id]);
    expect(found.map((f) => f?.items.map((i) => i.idx))).toEqual([[0], [0, 1, 2], undefined, [0]]);
    expect(found[1]!.order.price).toBe(Math.round(b.price * 100));

    // The next turn's reads are another statement, and see what was committed in between.
    await h.call('confirm-order', { id: a.id, payment: await pay(a.price) });
    expect((await findOrderWithItems(db, a.id))?.order.status).toBe('paid');
    expect(sent.statements).toBe(2);
  });

  it('reads together what is asked for in separate callbacks of one turn, as concurrent requests are', async () => {
    const a = await draft();
    const b = await draft();
    const { db, sent } = counted();
    // Two callbacks of one phase of the event loop, each asking for an order, as two requests'
    // handlers do: ticks and promises run between them.
    const reads = await new Promise<ReturnType<typeof findOrderWithItems>[]>((resolve) => {
      const asked: ReturnType<typeof findOrderWithItems>[] = [];
      setImmediate(() => asked.push(findOrderWithItems(db, a.id)));
      setImmediate(() => {
        asked.push(findOrderWithItems(db, b.id));
        resolve(asked);
      });
    });
    expect((await Promise.all(reads)).map((f) => f?.order.id)).toEqual([a.id, b.id]);
    expect(sent.statements).toBe(1);
  });

  it('sends at most 100 ids a statement', async () => {
    const a = await draft();
    const { db, sent } = counted();
    const ids = Array.from({ length: 250 }, (_, i) => `IAI${String(i).padStart(6, '0')}AAA`);
    ids[0] = a.id;
    ids[249] = a.id;
    const found = await Promise.all(ids.map((id) => findOrderWithItems(db, id)));
    expect(sent.statements).toBe(3);
    expect(found.filter(Boolean)).toHaveLength(2);
    expect(found[249]?.order.id).toBe(a.id);
  });

  it('fails every read of a statement that fails, and the next turn reads again', async () => {
    const a = await draft();
    const { db } = counted();
    const broken = new Proxy(db, {
      get: (target, prop, receiver) =>
        prop === 'executeQuery'
          ? () => Promise.reject(new Error('connection lost'))
          : (Reflect.get(target, prop, receiver) as unknown),
    });
    const reads = [a.id, 'IAI000000AAA'].map((id) => findOrderWithItems(broken, id));
    for (const r of reads) await expect(r).rejects.toThrow('connection lost');
    expect((await findOrderWithItems(db, a.id))?.order.id).toBe(a.id);
  });

  it('answers concurrent get-orders of several partners each with its own order', async () => {
    const other = await h.newPartner();
    const mine = await Promise.all([draft(), draft(h.demo, 2), draft(other)]);
    const calls = [
      ...mine.map((o, i) => ({ id: o.id, creds: i === 2 ? other : h.demo, status: 200 })),
      { id: mine[0]!.id, creds: other, status: 404 },
      { id: mine[2]!.id, creds: h.demo, status: 404 },
    ];
    const replies = await Promise.all(
      calls.map((c) => h.call<{ id: string }>('get-order', { id: c.id }, c.creds)),
    );
    expect(replies.map((r) => r.status)).toEqual(calls.map((c) => c.status));
    expect(replies.slice(0, 3).map((r) => r.body.id)).toEqual(mine.map((o) => o.id));
  });
});

describe('order state machine', () => {
  it('the order_events CHECK allows exactly the transitions of the domain table', async () => {
    const o = await draft();
    const db = h.service.database.db;
    const ROLLBACK = new Error('rollback');
    const mismatches: string[] = [];
    for (const from of [null, ...ORDER_STATUSES] as (OrderStatus | null)[]) {
      for (const to of ORDER_STATUSES) {
        const allowed = from === null ? to === 'draft' : TRANSITIONS[from].includes(to);
        let accepted: boolean;
        try {
          await db.transaction().execute(async (trx) => {
            await sql`insert into order_events (order_id, from_status, to_status, actor, at)
              values (${o.id}, ${from}, ${to}, 'test', now())`.execute(trx);
            throw ROLLBACK;
          });
          accepted = true;
        } catch (err) {
          if (err === ROLLBACK) accepted = true;
          else if ((err as { code?: string }).code === '23514') accepted = false;
          else throw err;
        }
        if (accepted !== allowed) mismatches.push(`${from} → ${to}: db ${accepted}, domain ${allowed}`);
      }
    }
    expect(mismatches).toEqual([]);
  });
});

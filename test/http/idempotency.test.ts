import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { payment, RCA_QUOTE, rcaItem, startHarness, type Creds, type Harness } from '../support/harness.ts';
import { signedPost } from '../support/signed.ts';

let h: Harness;
let start = '';
beforeAll(async () => {
  h = await startHarness();
  const quote = await h.call<{ offers: { min_start_date: string }[] }>('get-offers', RCA_QUOTE);
  start = quote.body.offers[0]!.min_start_date;
});
afterAll(() => h?.close());

/** A signed POST with an Idempotency-Key; the raw answer, bytes and headers. */
const send = (endpoint: string, body: unknown, key: string | undefined, creds: Creds = h.demo) =>
  signedPost(h, endpoint, body, key, creds);
const order = (name = 'Ion Popescu') => ({
  customer: { phone: '+37369123456', name },
  products: [rcaItem(start)],
});
const orderCount = async () =>
  (await sql<{ n: number }>`select count(*)::int as n from orders`.execute(h.service.svc.db)).rows[0]!.n;
const newKey = () => `key-${Math.random().toString(36).slice(2)}`;

/** Idempotency keys on create-order, confirm-order and pay-order-from-balance (decision 0006). */
describe('an Idempotency-Key', () => {
  it('answers a retried create-order byte for byte, marked as replayed, and creates one order', async () => {
    const key = newKey();
    const before = await orderCount();
    const first = await send('create-order', order(), key);
    expect(first.statusCode).toBe(200);
    expect(first.headers['idempotent-replayed']).toBeUndefined();
    const again = await send('create-order', order(), key);
    expect(again.statusCode).toBe(200);
    expect(again.body).toBe(first.body);
    expect(again.headers['idempotent-replayed']).toBe('true');
    expect(await orderCount()).toBe(before + 1);
  });

  it('refuses the same key with another body with 409, changing nothing', async () => {
    const key = newKey();
    await send('create-order', order(), key);
    const before = await orderCount();
    const other = await send('create-order', order('Maria Rusu'), key);
    expect(other.statusCode).toBe(409);
    expect(other.json()).toEqual({
      statusCode: 409,
      error: 'Conflict',
      message: 'This Idempotency-Key was used with a different request body; use a new key for a new request',
    });
    expect(await orderCount()).toBe(before);
  });

  it('lets exactly one of ten simultaneous duplicates run; the others replay it or are told it runs', async () => {
    const key = newKey();
    const before = await orderCount();
    const answers = await Promise.all(Array.from({ length: 10 }, () => send('create-order', order(), key)));
    expect(await orderCount()).toBe(before + 1);
    const ran = answers.filter((a) => a.statusCode === 200 && !a.headers['idempotent-replayed']);
    expect(ran).toHaveLength(1);
    for (const a of answers) {
      if (a.statusCode === 200) expect(a.body).toBe(ran[0]!.body);
      else expect(a.json().message).toMatch(/still being processed/);
    }
  });

  it('makes a retried wallet payment answer as the first did, debiting once', async () => {
    const created = await send('create-order', order(), undefined);
    const id = created.json().id as string;
    const balance = async () => (await h.call<{ balance: number }>('get-balance', {})).body.balance;
    const before = await balance();
    const key = newKey();
    const first = await send('pay-order-from-balance', { id }, key);
    expect(first.statusCode).toBe(200);
    const again = await send('pay-order-from-balance', { id }, key);
    expect(again.statusCode).toBe(200);
    expect(again.body).toBe(first.body);
    expect(again.headers['idempotent-replayed']).toBe('true');
    // Without the key, a second payment is refused: the order is no longer a draft.
    expect((await send('pay-order-from-balance', { id }, undefined)).statusCode).toBe(400);
    expect(Math.round((before - (await balance())) * 100)).toBe(Math.round(created.json().price * 100));
  });

  it('stores a refusal too: a retried confirm-order with a wrong amount gets the same 400', async () => {
    const created = await send('create-order', order(), undefined);
    const body = { id: created.json().id, payment: payment(1) };
    const key = newKey();
    const first = await send('confirm-order', body, key);
    expect(first.statusCode).toBe(400);
    const again = await send('confirm-order', body, key);
    expect(again.statusCode).toBe(400);
    expect(again.body).toBe(first.body);
    expect(again.headers['idempotent-replayed']).toBe('true');
  });

  it('does not store an unexpected failure: the retry runs again', async () => {
    const key = newKey();
    const db = h.service.svc.db;
    await sql`alter table order_items rename to order_items_away`.execute(db);
    let failed;
    try {
      failed = await send('create-order', order(), key);
    } finally {
      await sql`alter table order_items_away rename to order_items`.execute(db);
    }
    expect(failed.statusCode).toBe(500);
    expect(failed.json().message).not.toMatch(/\[API\]/);
    const retried = await send('create-order', order(), key);
    expect(retried.statusCode).toBe(200);
    expect(retried.headers['idempotent-replayed']).toBeUndefined();
  });

  it('belongs to one partner', async () => {
    const other = await h.newPartner();
    const key = newKey();
    const mine = await send('create-order', order(), key);
    const theirs = await send('create-order', order(), key, other);
    expect(theirs.statusCode).toBe(200);
    expect(theirs.headers['idempotent-replayed']).toBeUndefined();
    expect(theirs.json().id).not.toBe(mine.json().id);
  });

  it('must be 1 to 255 visible ASCII characters', async () => {
    for (const key of ['', 'a'.repeat(256), 'two words'])
      expect((await send('create-order', order(), key)).json()).toEqual({
        statusCode: 400,
        error: 'Idempotency-Key must be 1 to 255 visible ASCII characters',
        message: 'Idempotency-Key must be 1 to 255 visible ASCII characters',
      });
    expect((await send('create-order', order(), 'a'.repeat(255))).statusCode).toBe(200);
  });

  it('lives 24 hours', async () => {
    const key = newKey();
    await send('create-order', order(), key);
    await h.setClock(new Date(Date.now() + 25 * 3600_000).toISOString());
    try {
      const quote = await h.call<{ offers: { min_start_date: string }[] }>('get-offers', RCA_QUOTE);
      const later = await send(
        'create-order',
        {
          customer: { phone: '+37369123456', name: 'Ion' },
          products: [rcaItem(quote.body.offers[0]!.min_start_date)],
        },
        key,
      );
      expect(later.statusCode).toBe(200);
      expect(later.headers['idempotent-replayed']).toBeUndefined();
    } finally {
      await h.setClock(null);
    }
  });
});

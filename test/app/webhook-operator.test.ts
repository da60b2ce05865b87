import { createHmac } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { harnessAt, rcaItem, type Creds, type Harness } from '../support/harness.ts';
import { paidRcaOrder } from '../support/orders.ts';
import { startHookReceiver, type Hit, type Receiver } from '../support/receiver.ts';

const TODAY = '2026-11-21';
let h: Harness;

/** A real webhook receiver on a random local port; answers with `answer` (200 unless changed). */
let receiver: Receiver;
let receiverUrl: string;
const received: Hit[] = [];
let answer = 200;

beforeAll(async () => {
  receiver = await startHookReceiver(received, (res) =>
    res.writeHead(answer, { 'content-type': 'text/plain' }).end('ok'),
  );
  receiverUrl = `${receiver.base}/hooks/polita`;
  h = await harnessAt(`${TODAY}T12:00:00+02:00`);
});
afterAll(async () => {
  await h?.close();
  await receiver?.close();
});

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const forOrder = (id: string) => received.filter((r) => r.body.includes(id));
async function waitForDeliveries(id: string, n: number) {
  for (let i = 0; i < 100 && forOrder(id).length < n; i++) await sleep(100);
  return forOrder(id);
}

interface Detail {
  status: string;
  stored_status: string;
  products: Record<string, unknown>[];
  payment: Record<string, unknown> | null;
  ledger: unknown[];
  history: { from: string | null; to: string; actor: string; at: string }[];
  webhook_attempts: {
    trigger: string;
    url: string | null;
    http_status: number | null;
    error: string | null;
    latency_ms: number;
    at: string;
  }[];
}
const detail = (id: string) => h.admin<Detail>('GET', `/admin/orders/${id}`);

const paidOrder = (creds: Creds, item: Record<string, unknown> = {}) =>
  paidRcaOrder(h, creds, TODAY, { item });

describe('completion webhook', () => {
  let p: Creds;
  let newest: string;
  let done: string;

  beforeAll(async () => {
    p = await h.newPartner({ name: 'Webhook partner' });
    const patched = await h.admin('PATCH', `/admin/partners/${p.id}`, { webhook_url: receiverUrl });
    expect(patched.body).toMatchObject({ webhook_url: receiverUrl });
    // Rotated but not retired: the webhook must be signed with the newest of the two secrets.
    newest = (await h.admin<{ secret: string }>('POST', `/admin/partners/${p.id}/secrets`)).body.secret;
  });

  it('POSTs exactly one signed {"orderId","status":"completed"} after completion, and records it', async () => {
    done = await paidOrder(p);
    await h.waitForStatus(done, 'completed', { creds: p });
    const hits = await waitForDeliveries(done, 1);
    await sleep(1500);
    expect(forOrder(done)).toHaveLength(1);
    const hit = hits[0]!;
    expect(hit.method).toBe('POST');
    expect(hit.body).toBe(`{"orderId":"${done}","status":"completed"}`);
    expect(hit.headers['content-type']).toBe('application/json');
    const expected = createHmac('sha512', newest).update(hit.body).digest('hex');
    expect(hit.headers['x-hmac-signature']).toBe(`${p.id}:${expected}`);

    const d = await detail(done);
    expect(d.body.webhook_attempts).toEqual([
      {
        event_id: hit.headers['x-polita-event-id'],
        event: 'completed',
        attempt: 1,
        trigger: 'automatic',
        url: receiverUrl,
        http_status: 200,
        error: null,
        latency_ms: expect.any(Number),
        at: expect.stringMatching(/^2026-11-21T12:\d\d:\d\d\.\d{3}\+02:00$/),
      },
    ]);
  });

  it('records a receiver answering 500, and the operator can re-send the same event', async () => {
    answer = 500;
    try {
      const id = await paidOrder(p);
      await h.waitForStatus(id, 'completed', { creds: p });
      await waitForDeliveries(id, 1);
      await sleep(2500);
      expect(forOrder(id)).toHaveLength(1);
      const attempts = (await detail(id)).body.webhook_attempts;
      expect(attempts).toHaveLength(1);
      expect(attempts[0]).toMatchObject({ trigger: 'automatic', attempt: 1, http_status: 500 });

      answer = 200;
      const resent = await h.admin('POST', `/admin/orders/${id}/webhook`);
      expect(resent.status).toBe(200);
      expect(resent.body).toMatchObject({ httpStatus: 200, error: null, delivered: true });
      const hits = forOrder(id);
      expect(hits).toHaveLength(2);
      // The same event, so a receiver that saw the first can tell the second is a repeat.
      expect(hits[1]!.headers['x-polita-event-id']).toBe(hits[0]!.headers['x-polita-event-id']);
      const after = (await detail(id)).body.webhook_attempts;
      expect(after.map((a) => [a.trigger, a.http_status])).toEqual([
        ['automatic', 500],
        ['operator', 200],
      ]);
    } finally {
      answer = 200;
    }
  });

  it('sends nothing for an order whose issuance fails (vehicle 100000010)', async () => {
    const id = await paidOrder(p, { vehicle: '100000010' });
    const failed = await h.waitForStatus(id, 'failed', { creds: p });
    expect(failed.body.products).toBeUndefined();
    await sleep(1500);
    expect(forOrder(id)).toEqual([]);
    const d = await detail(id);
    expect(d.body.webhook_attempts).toEqual([]);
    expect(d.body.history.map((e) => `${e.from}→${e.to}`)).toEqual([
      'null→draft',
      'draft→paid',
      'paid→failed',
    ]);
    const resend = await h.admin('POST', `/admin/orders/${id}/webhook`);
    expect(resend.status).toBe(400);
  });

  it('shows the operator the whole order: products, payment, ledger, history, attempts', async () => {
    const d = await detail(done);
    expect(d.status).toBe(200);
    expect(d.body).toMatchObject({
      id: done,
      partner_id: p.id,
      status: 'completed',
      stored_status: 'completed',
      // 100000001 at moldasig, no margin: 1050.00 × 1.20 (1.8 l engine) × 1.20 (Chișinău) × 1.00 (bonus-malus).
      price: 1512,
      payment: { currency: 'MDL', amount: 1512, paid_at: expect.any(Number) },
      ledger: [],
    });
    expect(d.body.products).toEqual([
      expect.objectContaining({
        idx: 0,
        product: 'rca',
        issued: expect.objectContaining({ plate_number: 'CHY999' }),
        file: expect.stringMatching(/^http:\/\/polita\.test\/files\/[0-9a-f]{32}\.pdf$/),
      }),
    ]);
    expect(d.body.history.map((e) => `${e.from}→${e.to}`)).toEqual([
      'null→draft',
      'draft→paid',
      'paid→completed',
    ]);
    expect(d.body.history[1]!.actor).toBe(`partner:${p.id}`);
    expect((await h.admin('GET', '/admin/orders/IAI000000AAA')).status).toBe(404);
  });
});

describe('operator API', () => {
  it('creates partners with and without a wallet, showing the secret once', async () => {
    const a = await h.admin('POST', '/admin/partners', { name: 'Agent A' });
    expect(a.status).toBe(201);
    expect(a.body).toEqual({
      id: expect.any(String),
      secret: expect.stringMatching(/^[0-9a-f]{64}$/),
      name: 'Agent A',
      webhook_url: null,
      webhook_events: ['completed'],
      renewal_notice_days: 30,
      wallet: true,
      // On unless asked otherwise (decision 0084).
      require_timestamped_signature: true,
    });
    const b = await h.admin('POST', '/admin/partners', {
      name: 'Agent B',
      wallet: false,
      webhook_url: 'https://agent-b.example/hook',
    });
    expect(b.status).toBe(201);
    expect(b.body).toMatchObject({
      name: 'Agent B',
      wallet: false,
      webhook_url: 'https://agent-b.example/hook',
    });

    const read = await h.admin('GET', `/admin/partners/${a.body.id}`);
    expect(read.status).toBe(200);
    expect(read.body).toMatchObject({ id: a.body.id, name: 'Agent A', wallet: true, disabled: false });
    expect(JSON.stringify(read.body)).not.toContain(a.body.secret as string);
    const patched = await h.admin('PATCH', `/admin/partners/${a.body.id}`, { name: 'Agent A2' });
    expect(patched).toMatchObject({ status: 200, body: { name: 'Agent A2' } });
    expect((await h.admin('GET', '/admin/partners/nobody')).status).toBe(404);
    expect((await h.admin('PATCH', '/admin/partners/nobody', { name: 'x' })).status).toBe(404);
  });

  it('credits a wallet and answers the balance object', async () => {
    const p = await h.newPartner();
    const res = await h.admin('POST', `/admin/partners/${p.id}/wallet/credits`, {
      wallet: 'online',
      amount: 150.5,
      reference: 'wire-1',
    });
    expect(res.status).toBe(200);
    expect(res.body).toEqual({
      balance: 150.5,
      currency: 'MDL',
      wallets: { online: 150.5, insurance: 0, promo: 0 },
      updated_at: expect.stringMatching(/^2026-11-21T12:\d\d:\d\d\.\d{3}\+02:00$/),
    });
    const promo = await h.admin('POST', `/admin/partners/${p.id}/wallet/credits`, {
      wallet: 'promo',
      amount: 10,
      reference: 'promo-1',
    });
    expect(promo.body).toMatchObject({ balance: 160.5, wallets: { online: 150.5, promo: 10 } });
    for (const amount of [0, -5, 1.001]) {
      const bad = await h.admin('POST', `/admin/partners/${p.id}/wallet/credits`, {
        wallet: 'online',
        amount,
        reference: `bad-${amount}`,
      });
      expect(bad.status).toBe(400);
      expect(bad.body).toMatchObject({ statusCode: 400, error: expect.stringMatching(/amount/) });
    }
    const unknown = await h.admin('POST', '/admin/partners/nobody/wallet/credits', {
      wallet: 'online',
      amount: 1,
      reference: 'x',
    });
    expect(unknown.status).toBe(404);
  });

  it('lists orders newest first with cursor paging and partner and status filters', async () => {
    const p = await h.newPartner();
    const ids: string[] = [];
    for (let i = 0; i < 5; i++) {
      const r = await h.call<{ id: string }>(
        'create-order',
        { customer: { phone: '1' }, products: [rcaItem(TODAY)] },
        p,
      );
      ids.push(r.body.id);
      // Orders created in the same millisecond list by id (the listing's tie-break), not by the
      // order they were made in: on a fast machine two creations fall in one millisecond.
      await new Promise((resolve) => setTimeout(resolve, 2));
    }
    const seen: string[] = [];
    let cursor: string | null = null;
    const sizes: number[] = [];
    do {
      const q: string = `/admin/orders?partner_id=${p.id}&limit=2${cursor ? `&cursor=${cursor}` : ''}`;
      const page = await h.admin<{
        orders: { id: string; partner_id: string }[];
        next_cursor: string | null;
      }>('GET', q);
      expect(page.status).toBe(200);
      sizes.push(page.body.orders.length);
      seen.push(...page.body.orders.map((o) => o.id));
      cursor = page.body.next_cursor;
    } while (cursor && sizes.length < 10);
    expect(sizes).toEqual([2, 2, 1]);
    expect(seen).toEqual([...ids].reverse());

    const drafts = await h.admin<{ orders: { id: string; status: string }[] }>(
      'GET',
      `/admin/orders?partner_id=${p.id}&status=draft`,
    );
    expect(drafts.body.orders).toHaveLength(5);
    const none = await h.admin<{ orders: unknown[]; next_cursor: null }>(
      'GET',
      `/admin/orders?partner_id=${p.id}&status=completed`,
    );
    expect(none.body).toEqual({ orders: [], next_cursor: null });
    for (const q of ['status=bogus', 'limit=0', 'limit=abc', 'cursor=@@@']) {
      const bad = await h.admin('GET', `/admin/orders?${q}`);
      expect({ q, status: bad.status }).toEqual({ q, status: 400 });
    }
  });

  it('moves, reads and resets the sandbox clock', async () => {
    const set = await h.admin('PUT', '/admin/sandbox/clock', { now: '2026-09-30T12:00:00+03:00' });
    expect(set.status).toBe(200);
    expect(set.body.now).toMatch(/^2026-09-30T12:00:0\d\.\d{3}\+03:00$/);
    const read = await h.admin('GET', '/admin/sandbox/clock');
    expect(read.body.now).toMatch(/^2026-09-30T12:00:\d\d\.\d{3}\+03:00$/);
    for (const now of ['2026-09-30T12:00:00', 'yesterday', '']) {
      expect((await h.admin('PUT', '/admin/sandbox/clock', { now })).status).toBe(400);
    }
    const reset = await h.admin('DELETE', '/admin/sandbox/clock');
    expect(reset.status).toBe(200);
    expect(Math.abs(Date.parse(reset.body.now as string) - Date.now())).toBeLessThan(5000);
    expect(reset.body.now).toMatch(/[+-]\d\d:\d\d$/);
    await h.setClock(`${TODAY}T12:00:00+02:00`);
  });

  it('answers bad operator input with 400 in the error shape', async () => {
    for (const [method, url, body] of [
      ['POST', '/admin/partners', {}],
      ['POST', '/admin/partners', { name: 'x', webhook_url: 'ftp://example.com/hook' }],
      ['POST', '/admin/partners', { name: 'x', wallet: 'yes' }],
      ['PATCH', '/admin/partners/demo', { disabled: 'no' }],
      ['POST', '/admin/partners/demo/wallet/credits', { wallet: 'gold', amount: 1, reference: 'x' }],
    ] as const) {
      const res = await h.admin(method, url, body);
      expect({ url, body, status: res.status }).toEqual({ url, body, status: 400 });
      expect(res.body).toEqual({ statusCode: 400, error: expect.any(String), message: expect.any(String) });
    }
  });
});

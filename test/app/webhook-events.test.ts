import { createHmac } from 'node:crypto';
import type { ServerResponse } from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { expireDrafts } from '../../src/app/expire-drafts.ts';
import { harnessAt, rcaItem, type Creds, type Harness } from '../support/harness.ts';
import { paidRcaOrder } from '../support/orders.ts';
import { startHookReceiver, type Hit, type Receiver } from '../support/receiver.ts';

/**
 * Webhook events as decision 0015 has them: event ids, timestamps and the replay-safe signature,
 * retries on the schedule (WEBHOOK_RETRY_SCHEDULE of a second here), durable across a restart,
 * opt-in statuses delivered in order, a slow partner never holding another back, the test event.
 */
const TODAY = '2026-11-21';
let h: Harness;

/** One receiver; each path answers as `behave` says (200 by default). */
const hits: Hit[] = [];
const behave = new Map<string, (res: ServerResponse, n: number) => void>();
let receiver: Receiver;
let base: string;

beforeAll(async () => {
  receiver = await startHookReceiver(hits, (res, hit) => {
    const n = hits.filter((x) => x.path === hit.path).length;
    const b = behave.get(hit.path);
    if (b) b(res, n);
    else res.writeHead(200).end('ok');
  });
  base = receiver.base;
  h = await harnessAt(`${TODAY}T12:00:00+02:00`, { env: { WEBHOOK_RETRY_SCHEDULE: '1,1,1' } });
});
afterAll(async () => {
  receiver?.dropConnections();
  await h?.close();
  await receiver?.close();
});

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const at = (path: string) => hits.filter((x) => x.path === path);
async function waitFor<T>(what: string, f: () => T | undefined | false, ms = 15_000): Promise<T> {
  const deadline = Date.now() + ms;
  for (;;) {
    const v = f();
    if (v) return v;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await sleep(50);
  }
}

async function partnerAt(path: string, extra: Record<string, unknown> = {}): Promise<Creds> {
  return h.newPartner({ name: `Receiver ${path}`, webhook_url: `${base}${path}`, ...extra });
}

const paidOrder = (
  creds: Creds,
  item: Record<string, unknown> = {},
  via: 'confirm-order' | 'pay-order-from-balance' = 'confirm-order',
) => paidRcaOrder(h, creds, TODAY, { item, via });

interface EventView {
  id: string;
  status: string;
  state: string;
  attempts: number;
  next_attempt_at: string | null;
}
const events = async (id: string) =>
  (
    await h.admin<{ webhook_events: EventView[]; webhook_attempts: Record<string, unknown>[] }>(
      'GET',
      `/admin/orders/${id}`,
    )
  ).body;

/** What a receiver checks (decision 0015), written out here as a partner would. */
function verifies(hit: Hit, secrets: string[]): boolean {
  const t = hit.headers['x-polita-timestamp'] as string;
  const sig = hit.headers['x-polita-signature'] as string;
  const parts = sig.split(',');
  if (parts[0] !== `t=${t}`) return false;
  // t=, then one v1= per secret, then one v2= per secret (over the event id too), newest first.
  const id = hit.headers['x-polita-event-id'] as string;
  const hmac = (s: string, text: string) => createHmac('sha512', s).update(text).digest('hex');
  const expected = [
    ...secrets.map((s) => `v1=${hmac(s, `${t}.${hit.body}`)}`),
    ...secrets.map((s) => `v2=${hmac(s, `${t}.${id}.${hit.body}`)}`),
  ];
  return JSON.stringify(parts.slice(1)) === JSON.stringify(expected);
}

describe('webhook events', () => {
  it('carry an event id, a timestamp and a t=,v1= signature per valid secret, newest first', async () => {
    const p = await partnerAt('/signed');
    const newer = (await h.admin<{ secret: string }>('POST', `/admin/partners/${p.id}/secrets`)).body.secret;
    const id = await paidOrder(p);
    const [hit] = await waitFor('the delivery', () => at('/signed').length === 1 && at('/signed'));
    expect(hit!.body).toBe(`{"orderId":"${id}","status":"completed"}`);
    expect(hit!.headers['x-polita-event-id']).toMatch(/^evt_[0-9a-f]{24}$/);
    const t = Number(hit!.headers['x-polita-timestamp']);
    expect(Math.abs(t - Date.now() / 1000)).toBeLessThan(30);
    expect(verifies(hit!, [newer, p.secret])).toBe(true);
    // The spec's header is unchanged: the body alone, with the newest secret.
    const spec = createHmac('sha512', newer).update(hit!.body).digest('hex');
    expect(hit!.headers['x-hmac-signature']).toBe(`${p.id}:${spec}`);
    expect((await events(id)).webhook_events).toEqual([
      expect.objectContaining({ id: hit!.headers['x-polita-event-id'], status: 'completed' }),
    ]);
  });

  it('retry a receiver that fails twice (500, then a dropped connection) with the same event id', async () => {
    behave.set('/flaky', (res, n) => {
      if (n === 1) res.writeHead(500).end('down');
      else if (n === 2) res.socket?.destroy();
      else res.writeHead(204).end();
    });
    const p = await partnerAt('/flaky');
    const id = await paidOrder(p);
    const got = await waitFor('three attempts', () => at('/flaky').length >= 3 && at('/flaky'));
    const ids = new Set(got.map((x) => x.headers['x-polita-event-id']));
    expect(ids.size).toBe(1);
    // About one second apart (the schedule), and each signed with its own timestamp.
    expect(got[1]!.at - got[0]!.at).toBeGreaterThan(700);
    for (const x of got) expect(verifies(x, [p.secret])).toBe(true);
    for (let i = 0; i < 50; i++) {
      const v = await events(id);
      if (v.webhook_events[0]?.state === 'delivered') break;
      await sleep(100);
    }
    const v = await events(id);
    expect(v.webhook_events).toEqual([
      expect.objectContaining({
        status: 'completed',
        state: 'delivered',
        attempts: 3,
        next_attempt_at: null,
      }),
    ]);
    expect(v.webhook_attempts.map((a) => [a.attempt, a.http_status])).toEqual([
      [1, 500],
      [2, null],
      [3, 204],
    ]);
    await sleep(1500);
    expect(at('/flaky')).toHaveLength(3);
  });

  it('give up after the schedule, and the operator re-sends the failed event', async () => {
    let ok = false;
    behave.set('/dead', (res) => res.writeHead(ok ? 200 : 503).end());
    const p = await partnerAt('/dead');
    const id = await paidOrder(p);
    await waitFor('four attempts', () => at('/dead').length >= 4);
    let v = await events(id);
    for (let i = 0; i < 50 && v.webhook_events[0]?.state !== 'failed'; i++) {
      await sleep(100);
      v = await events(id);
    }
    expect(v.webhook_events[0]).toMatchObject({ state: 'failed', attempts: 4 });
    await sleep(1500);
    expect(at('/dead')).toHaveLength(4);
    ok = true;
    const resent = await h.admin('POST', `/admin/orders/${id}/webhook`);
    expect(resent.body).toMatchObject({ delivered: true, httpStatus: 200, eventId: v.webhook_events[0]!.id });
    expect((await events(id)).webhook_events[0]).toMatchObject({ state: 'delivered' });
  });

  it('survive a restart: a retry due while the service was down is made by the next one', async () => {
    let up = false;
    behave.set('/restart', (res) => res.writeHead(up ? 200 : 500).end());
    const p = await partnerAt('/restart');
    const id = await paidOrder(p);
    await waitFor('the first attempt', () => at('/restart').length >= 1);
    await h.restart();
    up = true;
    // Only the new service can be answered 200: the receiver was down until it started.
    await waitFor('the retry after the restart', () => at('/restart').length >= 2);
    for (let i = 0; i < 100; i++) {
      if ((await events(id)).webhook_events[0]?.state === 'delivered') break;
      await sleep(100);
    }
    expect((await events(id)).webhook_events[0]).toMatchObject({ state: 'delivered' });
    expect(new Set(at('/restart').map((x) => x.headers['x-polita-event-id'])).size).toBe(1);
  });

  it('failed and refunded (opt-in) reach a receiver in order, each once delivered', async () => {
    // The failed event is refused once: the refunded event must wait behind it, not overtake it.
    behave.set('/ordered', (res, n) => res.writeHead(n === 1 ? 500 : 200).end());
    const p = await partnerAt('/ordered', { webhook_events: ['completed', 'failed', 'refunded'] });
    await h.admin('POST', `/admin/partners/${p.id}/wallet/credits`, {
      wallet: 'online',
      amount: 100000,
      reference: 'events test',
    });
    const id = await paidOrder(p, { vehicle: '100000010' }, 'pay-order-from-balance');
    const got = await waitFor('three deliveries', () => at('/ordered').length >= 3 && at('/ordered'));
    expect(got.map((x) => JSON.parse(x.body).status)).toEqual(['failed', 'failed', 'refunded']);
    // The receiver has answered; the service records the attempt a moment later.
    let v = await events(id);
    for (let i = 0; i < 100 && v.webhook_events.some((e) => e.state !== 'delivered'); i++) {
      await sleep(50);
      v = await events(id);
    }
    expect(v.webhook_events.map((e) => [e.status, e.state])).toEqual([
      ['failed', 'delivered'],
      ['refunded', 'delivered'],
    ]);
  });

  it('expired (opt-in) is sent when the sweep persists a draft past its day', async () => {
    const p = await partnerAt('/expired', { webhook_events: ['expired', 'completed'] });
    expect((await h.admin('GET', `/admin/partners/${p.id}`)).body).toMatchObject({
      webhook_events: ['completed', 'expired'],
    });
    const created = await h.call<{ id: string }>(
      'create-order',
      { customer: { phone: '+37369000000' }, products: [rcaItem(TODAY)] },
      p,
    );
    await h.setClock(`${TODAY}T23:59:59.500+02:00`);
    try {
      expect(await expireDrafts(h.service.svc)).toBeGreaterThanOrEqual(1);
    } finally {
      await h.setClock(`${TODAY}T12:00:00+02:00`);
    }
    const [hit] = await waitFor('the expired event', () => at('/expired').length === 1 && at('/expired'));
    expect(hit!.body).toBe(`{"orderId":"${created.body.id}","status":"expired"}`);
  });

  it("are not held back by another partner's endpoint that hangs", async () => {
    behave.set('/hangs', () => {}); // never answers: each attempt waits out its 10 s
    const slow = await partnerAt('/hangs');
    const fast = await partnerAt('/fast');
    for (let i = 0; i < 12; i++) await paidOrder(slow);
    await waitFor('the slow partner occupying its slots', () => at('/hangs').length >= 8);
    const started = Date.now();
    await paidOrder(fast);
    await waitFor('the fast partner delivery', () => at('/fast').length === 1, 8000);
    expect(Date.now() - started).toBeLessThan(6000);
    // At most 8 at once to one partner, however many are due.
    expect(at('/hangs')).toHaveLength(8);
    // Let the slow partner recover, so that no attempt is left hanging for the teardown.
    behave.delete('/hangs');
    receiver.dropConnections();
  });
});

describe('webhook settings and the test event', () => {
  it('webhook_events must hold completed, and only known statuses', async () => {
    const bad = await h.admin('POST', '/admin/partners', { name: 'X', webhook_events: ['failed'] });
    expect(bad.status).toBe(400);
    expect(bad.body.message).toMatch(/must include "completed"/);
    const unknown = await h.admin('POST', '/admin/partners', { name: 'X', webhook_events: ['paid'] });
    expect(unknown.status).toBe(400);
    expect(unknown.body.message).toMatch(/completed.*failed.*refunded.*expired/);
    const p = await h.newPartner();
    const patched = await h.admin('PATCH', `/admin/partners/${p.id}`, {
      webhook_events: ['refunded', 'completed'],
    });
    expect(patched.body).toMatchObject({ webhook_events: ['completed', 'refunded'] });
  });

  it('POST /admin/partners/:id/webhook-test sends a signed test event now', async () => {
    const p = await partnerAt('/test-event');
    const res = await h.admin('POST', `/admin/partners/${p.id}/webhook-test`);
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({
      delivered: true,
      httpStatus: 200,
      error: null,
      url: `${base}/test-event`,
      eventId: expect.stringMatching(/^evt_/),
    });
    const [hit] = at('/test-event');
    expect(hit!.body).toBe('{"orderId":"TST000000TST","status":"test"}');
    expect(verifies(hit!, [p.secret])).toBe(true);

    const none = await h.newPartner();
    const refused = await h.admin('POST', `/admin/partners/${none.id}/webhook-test`);
    expect(refused.status).toBe(409);
    expect(refused.body.message).toMatch(/has no webhook URL/);
    expect((await h.admin('POST', '/admin/partners/nobody/webhook-test')).status).toBe(404);
  });
});

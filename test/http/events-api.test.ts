import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { purgeOldEvents } from '../../src/app/partner-events.ts';
import { sendRenewalNotices } from '../../src/app/renewal-notices.ts';
import { loadConfig } from '../../src/config.ts';
import { createLogger } from '../../src/log.ts';
import { startService } from '../../src/service.ts';
import { harnessAt, TEST_SECRET_KEY, type Creds, type Harness } from '../support/harness.ts';
import { paidRcaOrder } from '../support/orders.ts';
import { startHookReceiver, type Hit, type Receiver } from '../support/receiver.ts';

/**
 * list-events, resend-event, the events' retention (decision 0091) and the renewal notices
 * (decision 0092), from outside: signed /v1 calls and a local receiver.
 */
const TODAY = '2026-11-21';
let h: Harness;

const hits: Hit[] = [];
const down = new Set<string>();
let receiver: Receiver;
let base: string;

beforeAll(async () => {
  receiver = await startHookReceiver(hits, (res, hit) => res.writeHead(down.has(hit.path) ? 503 : 200).end());
  base = receiver.base;
  h = await harnessAt(`${TODAY}T12:00:00+02:00`, { env: { WEBHOOK_RETRY_SCHEDULE: '1' } });
});
afterAll(async () => {
  await h?.close();
  await receiver?.close();
});

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const at = (path: string) => hits.filter((x) => x.path === path);
async function waitFor<T>(what: string, f: () => Promise<T | undefined | false> | T | undefined | false) {
  const deadline = Date.now() + 15_000;
  for (;;) {
    const v = await f();
    if (v) return v;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await sleep(50);
  }
}

interface Listed {
  id: string;
  type: string;
  created_at: string;
  order_id: string;
  data: Record<string, string>;
  delivery: { status: string; attempts: number };
}
const list = (creds: Creds, body: Record<string, unknown> = {}) =>
  h.call<{ events: Listed[]; has_more: boolean }>('list-events', body, creds);

async function completedOrder(creds: Creds, start = TODAY): Promise<string> {
  const id = await paidRcaOrder(h, creds, start);
  await h.waitForStatus(id, 'completed', { creds });
  return id;
}

/** Waits until the order's completed event is delivered. */
const delivered = (creds: Creds, orderId: string) =>
  waitFor('the completed event delivered', async () => {
    const e = (await list(creds, { order_id: orderId })).body.events[0];
    return e?.delivery.status === 'delivered';
  });

describe('list-events', () => {
  it('lists the events of a partner without a webhook URL as not_subscribed, oldest first', async () => {
    const p = await h.newPartner({ name: 'No URL' });
    const a = await completedOrder(p);
    const b = await completedOrder(p);
    const res = await list(p);
    expect(res.status).toBe(200);
    expect(res.body.has_more).toBe(false);
    expect(res.body.events).toEqual([
      {
        id: expect.stringMatching(/^evt_[0-9a-f]{24}$/),
        type: 'completed',
        created_at: expect.stringMatching(/^2026-11-21T12:\d\d:\d\d\.\d{3}\+02:00$/),
        order_id: a,
        data: { orderId: a, status: 'completed' },
        delivery: { status: 'not_subscribed', attempts: 0 },
      },
      expect.objectContaining({ order_id: b, type: 'completed' }),
    ]);
  });

  it('pages with after and limit, filters by type and order, and refuses a foreign or unknown cursor', async () => {
    const p = await h.newPartner({ name: 'Pages' });
    await h.admin('PATCH', `/admin/partners/${p.id}`, { webhook_events: ['completed', 'refunded'] });
    const ids = [await completedOrder(p), await completedOrder(p), await completedOrder(p)];
    const refunded = await h.admin('POST', `/admin/orders/${ids[1]}/refund`, { reason: 'test' });
    expect(refunded.status, JSON.stringify(refunded.body)).toBe(200);

    const first = await list(p, { limit: 2 });
    expect(first.body.events.map((e) => e.order_id)).toEqual([ids[0], ids[1]]);
    expect(first.body.has_more).toBe(true);
    const rest = await list(p, { limit: 2, after: first.body.events[1]!.id });
    expect(rest.body.events.map((e) => [e.type, e.order_id])).toEqual([
      ['completed', ids[2]],
      ['refunded', ids[1]],
    ]);
    expect(rest.body.has_more).toBe(false);

    const onlyRefunds = await list(p, { types: ['refunded', 'expiring'] });
    expect(onlyRefunds.body.events.map((e) => [e.type, e.order_id])).toEqual([['refunded', ids[1]]]);
    const ofOrder = await list(p, { order_id: ids[1] });
    expect(ofOrder.body.events.map((e) => e.type)).toEqual(['completed', 'refunded']);
    const ofOrderTyped = await list(p, { order_id: ids[1], types: ['refunded'] });
    expect(ofOrderTyped.body.events.map((e) => e.type)).toEqual(['refunded']);

    const other = await h.newPartner({ name: 'Other' });
    const foreign = await list(other, { after: first.body.events[0]!.id });
    expect(foreign.status).toBe(400);
    expect(foreign.body).toMatchObject({ statusCode: 400, error: expect.stringMatching(/Unknown cursor/) });
    expect((await list(p, { after: 'evt_000000000000000000000000' })).status).toBe(400);
    expect((await list(p, { limit: 101 })).status).toBe(400);
    expect((await list(p, { types: ['paid'] })).status).toBe(400);
    // Another partner sees none of them.
    expect((await list(other)).body.events).toEqual([]);
  });

  it('shows each delivery state: delivered, and failed after the schedule', async () => {
    const p = await h.newPartner({ name: 'States', webhook_url: `${base}/states` });
    const ok = await completedOrder(p);
    await waitFor('the delivery', async () => {
      const e = (await list(p, { order_id: ok })).body.events[0];
      return e?.delivery.status === 'delivered' && e;
    });
    down.add('/failing');
    const q = await h.newPartner({ name: 'Failing', webhook_url: `${base}/failing` });
    const bad = await completedOrder(q);
    const failed = await waitFor('the event to fail', async () => {
      const e = (await list(q, { order_id: bad })).body.events[0];
      return e?.delivery.status === 'failed' && e;
    });
    expect(failed.delivery.attempts).toBe(2);
  });
});

describe('resend-event', () => {
  it('sends the same event id and body again to the current URL, and settles the event', async () => {
    const p = await h.newPartner({ name: 'Resend' });
    const id = await completedOrder(p);
    const [event] = (await list(p)).body.events;
    expect(event!.delivery.status).toBe('not_subscribed');

    const noUrl = await h.call('resend-event', { id: event!.id }, p);
    expect(noUrl.status).toBe(400);
    expect(noUrl.body).toMatchObject({ error: 'No webhook URL', message: 'No webhook URL' });

    await h.admin('PATCH', `/admin/partners/${p.id}`, { webhook_url: `${base}/resent` });
    const queued = await h.call('resend-event', { id: event!.id }, p);
    expect(queued.status).toBe(202);
    expect(queued.body).toEqual({ id: event!.id, delivery: 'queued' });
    const [hit] = await waitFor('the re-send', () => at('/resent').length === 1 && at('/resent'));
    expect(hit!.body).toBe(`{"orderId":"${id}","status":"completed"}`);
    expect(hit!.headers['x-polita-event-id']).toBe(event!.id);
    const after = await waitFor('the event delivered', async () => {
      const e = (await list(p)).body.events[0];
      return e?.delivery.status === 'delivered' && e;
    });
    expect(after.delivery.attempts).toBe(1);

    const other = await h.newPartner({ name: 'Not yours', webhook_url: `${base}/other` });
    const foreign = await h.call('resend-event', { id: event!.id }, other);
    expect(foreign.status).toBe(404);
    expect(foreign.body).toMatchObject({ error: 'Event not found' });
  });

  it('answers 429 past 60 re-sends a minute of one partner', async () => {
    const p = await h.newPartner({ name: 'Many resends', webhook_url: `${base}/many` });
    await completedOrder(p);
    const [event] = (await list(p)).body.events;
    const answers: number[] = [];
    for (let i = 0; i < 61; i++) answers.push((await h.call('resend-event', { id: event!.id }, p)).status);
    expect(answers.slice(0, 60).every((s) => s === 202)).toBe(true);
    const refused = await h.call('resend-event', { id: event!.id }, p);
    expect(refused.status).toBe(429);
    expect(refused.headers['retry-after']).toBeDefined();
    expect(refused.body).toMatchObject({
      statusCode: 429,
      error: expect.stringMatching(/at most 60 a minute/),
    });
    // list-events is not limited by it.
    expect((await list(p)).status).toBe(200);
  });
});

describe('retention', () => {
  it('removes events older than 30 days by a job, never by a request', async () => {
    const p = await h.newPartner({ name: 'Old events' });
    await completedOrder(p);
    const [event] = (await list(p)).body.events;
    await h.setClock('2026-12-22T12:00:00+02:00');
    try {
      // Past 30 days it is no longer listed, though still stored until the job runs.
      expect((await list(p)).body.events).toEqual([]);
      expect((await list(p, { after: event!.id })).status).toBe(200);
      expect(await purgeOldEvents(h.service.svc)).toBeGreaterThanOrEqual(1);
      expect((await list(p, { after: event!.id })).status).toBe(400);
    } finally {
      await h.setClock(`${TODAY}T12:00:00+02:00`);
    }
  });
});

describe('renewal notices', () => {
  it('make one expiring event an order once renewal_notice_days remain, for the clock moved forward', async () => {
    const p = await h.newPartner({ name: 'Renewals', webhook_url: `${base}/renewals` });
    const patched = await h.admin('PATCH', `/admin/partners/${p.id}`, {
      webhook_events: ['completed', 'expiring'],
      renewal_notice_days: 20,
    });
    expect(patched.body).toMatchObject({
      renewal_notice_days: 20,
      webhook_events: ['completed', 'expiring'],
    });
    const quiet = await h.newPartner({ name: 'No renewals' });
    await h.admin('PATCH', `/admin/partners/${quiet.id}`, { renewal_notice_days: 0 });
    const id = await completedOrder(p); // rca: 2026-11-21 to 2027-11-20
    await completedOrder(quiet);
    // A notice waits while an earlier event of its order is still being delivered.
    await delivered(p, id);

    // 21 days before the last day: not yet.
    await h.setClock('2027-10-30T12:00:00+02:00');
    try {
      await sendRenewalNotices(h.service.svc);
      expect((await list(p, { types: ['expiring'] })).body.events).toEqual([]);
      // 20 days before: the notice, once, however often the job runs.
      await h.setClock('2027-10-31T09:00:00+02:00');
      await sendRenewalNotices(h.service.svc);
      await sendRenewalNotices(h.service.svc);
      const [hit] = await waitFor(
        'the expiring event',
        () => at('/renewals').length === 2 && at('/renewals').slice(1),
      );
      expect(hit!.body).toBe(`{"orderId":"${id}","status":"completed","event":"expiring"}`);
      const listed = (await list(p, { types: ['expiring'] })).body.events;
      expect(listed).toEqual([
        expect.objectContaining({
          id: hit!.headers['x-polita-event-id'],
          type: 'expiring',
          order_id: id,
          data: { orderId: id, status: 'completed', event: 'expiring' },
        }),
      ]);
      expect((await list(quiet, { types: ['expiring'] })).body.events).toEqual([]);
    } finally {
      await h.setClock(`${TODAY}T12:00:00+02:00`);
    }
  });

  it('are recorded as not_subscribed for a partner that does not receive expiring', async () => {
    const p = await h.newPartner({ name: 'Unsubscribed renewals', webhook_url: `${base}/unsub` });
    const id = await completedOrder(p);
    await delivered(p, id);
    await h.setClock('2027-10-22T12:00:00+02:00');
    try {
      await sendRenewalNotices(h.service.svc);
      const listed = (await list(p, { types: ['expiring'] })).body.events;
      expect(listed).toEqual([
        expect.objectContaining({ order_id: id, delivery: { status: 'not_subscribed', attempts: 0 } }),
      ]);
    } finally {
      await h.setClock(`${TODAY}T12:00:00+02:00`);
    }
    expect(at('/unsub').map((x) => JSON.parse(x.body).status)).toEqual(['completed']);
  });

  it('are made once an order when two instances run the job at the same time', async () => {
    const p = await h.newPartner({ name: 'Two instances' });
    const ids = [await completedOrder(p), await completedOrder(p), await completedOrder(p)];
    const other = await startService(
      loadConfig({
        DATABASE_URL: h.databaseUrl,
        DATA_DIR: h.dataDir,
        SECRET_KEY: TEST_SECRET_KEY,
        SANDBOX: 'true',
        LOG_LEVEL: 'silent',
      }),
      { logger: createLogger('silent'), workers: false },
    );
    await h.setClock('2027-10-28T12:00:00+02:00');
    try {
      const made = await Promise.all([
        sendRenewalNotices(h.service.svc),
        sendRenewalNotices(other.svc),
        sendRenewalNotices(h.service.svc),
      ]);
      const listed = (await list(p, { types: ['expiring'] })).body.events.map((e) => e.order_id);
      expect(listed.sort()).toEqual([...ids].sort());
      // Every notice was made by one of the runs, none twice.
      expect(made.reduce((a, b) => a + b, 0)).toBeGreaterThanOrEqual(ids.length);
    } finally {
      await h.setClock(`${TODAY}T12:00:00+02:00`);
      await other.stop();
    }
  });

  it('are made by the scheduled job, once, from any instance', async () => {
    const p = await h.newPartner({ name: 'Scheduled' });
    const id = await completedOrder(p);
    await h.setClock('2027-10-25T12:00:00+02:00');
    try {
      // The job pg-boss's schedule makes each minute, sent now rather than waited for.
      await h.service.boss.send('renewal-notices', {});
      await h.service.boss.send('renewal-notices', {});
      const listed = await waitFor('the notice', async () => {
        const e = (await list(p, { types: ['expiring'] })).body.events;
        return e.length > 0 && e;
      });
      await sleep(1500);
      expect((await list(p, { types: ['expiring'] })).body.events).toHaveLength(1);
      expect(listed[0]!.order_id).toBe(id);
    } finally {
      await h.setClock(`${TODAY}T12:00:00+02:00`);
    }
  });
});

import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { dispatchQueuedDeliveries } from '../../src/app/webhook-events.ts';
import { completeIssuedOrder } from '../../src/db/repos/issuance.ts';
import { startHarness, type Creds, type Harness } from '../support/harness.ts';
import { paidRcaOrder } from '../support/orders.ts';

/**
 * The statement that completes an issued order (its last item, the move to completed, the history
 * row, the webhook event and its place in the webhook outbox), called directly on a web-only
 * service (WORKERS=false), whose paid orders stay paid; and the webhook outbox that turns the
 * queued event into its first deliver-webhook job.
 */
const TODAY = '2026-11-21';
let h: Harness;

beforeAll(async () => {
  h = await startHarness({ workers: false });
  await h.setClock(`${TODAY}T12:00:00+02:00`);
  // Its poll would dispatch what a test has just queued: each test dispatches by itself.
  await h.service.webhookOutbox.stop();
}, 60_000);
afterAll(() => h?.close());

const item = (token: string) => ({
  idx: 0,
  issued: JSON.stringify({ product: 'rca', policy_number: `RCA-${token}` }),
  fileToken: token,
  pdf: Buffer.from(`%PDF-1.3 ${token}`),
});

/** What the completion could have written for this order. */
async function footprint(orderId: string) {
  const { rows } = await sql<Record<string, unknown>>`
    select (select status from orders where id = ${orderId}) as status,
           (select completed_at is not null from orders where id = ${orderId}) as completed_at,
           (select issued->>'policy_number' from order_items where order_id = ${orderId} and idx = 0) as policy,
           (select count(*)::int from documents where order_id = ${orderId}) as documents,
           (select count(*)::int from order_events where order_id = ${orderId} and to_status = 'completed') as history,
           (select coalesce(json_agg(json_build_object('state', state, 'body', body)), '[]') from webhook_events
             where order_id = ${orderId}) as events,
           (select count(*)::int from webhook_outbox o join webhook_events e on e.id = o.event_id
             where e.order_id = ${orderId}) as queued,
           (select count(*)::int from pgboss.job j join webhook_events e on e.id = j.data->>'eventId'
             where j.name = 'deliver-webhook' and e.order_id = ${orderId}) as jobs`.execute(h.service.svc.db);
  return rows[0]!;
}

const complete = (orderId: string, token: string, eventId: string) =>
  completeIssuedOrder(h.service.svc.db, {
    orderId,
    from: 'paid',
    item: item(token),
    eventId,
    at: new Date(),
  });

describe('completing an issued order in one statement', () => {
  let receiving: Creds;
  beforeAll(async () => {
    receiving = await h.newPartner({ webhook_url: 'http://127.0.0.1:9/hooks' });
  });

  it('stores the item and its PDF, completes the order with its history row, and queues its event', async () => {
    const id = await paidRcaOrder(h, receiving, TODAY);
    expect(await complete(id, 'a'.repeat(32), 'evt_completion_a')).toEqual({ moved: true, queued: true });
    expect(await footprint(id)).toEqual({
      status: 'completed',
      completed_at: true,
      policy: `RCA-${'a'.repeat(32)}`,
      documents: 1,
      history: 1,
      events: [{ state: 'pending', body: `{"orderId":"${id}","status":"completed"}` }],
      queued: 1,
      jobs: 0,
    });
    // Nothing kicked the outbox (as if the process had died after the commit): a dispatch, here
    // called directly as the next poll would, makes the event's first job, grouped by partner.
    await dispatchQueuedDeliveries(h.service.svc);
    expect(await footprint(id)).toMatchObject({ queued: 0, jobs: 1 });
    const { rows } = await sql<{ group_id: string }>`
      select j.group_id from pgboss.job j join webhook_events e on e.id = j.data->>'eventId'
      where j.name = 'deliver-webhook' and e.order_id = ${id}`.execute(h.service.svc.db);
    expect(rows).toEqual([{ group_id: receiving.id }]);
  });

  it('changes nothing of the order a second time: the guard on its status misses', async () => {
    const id = await paidRcaOrder(h, receiving, TODAY);
    await complete(id, 'b'.repeat(32), 'evt_completion_b');
    await dispatchQueuedDeliveries(h.service.svc);
    const before = await footprint(id);
    expect(await complete(id, 'c'.repeat(32), 'evt_completion_c')).toEqual({ moved: false, queued: false });
    // The item is stored again (a retried attempt's PDF), as its own transaction stored it before;
    // the order, its history, its event and its job stay as they were.
    expect(await footprint(id)).toEqual({ ...before, policy: `RCA-${'c'.repeat(32)}`, documents: 2 });
  });

  it('records the event of a partner without a webhook URL as not_subscribed, and queues nothing', async () => {
    const silent = await h.newPartner();
    const id = await paidRcaOrder(h, silent, TODAY);
    expect(await complete(id, 'd'.repeat(32), 'evt_completion_d')).toEqual({ moved: true, queued: false });
    expect(await footprint(id)).toMatchObject({
      status: 'completed',
      events: [{ state: 'not_subscribed', body: `{"orderId":"${id}","status":"completed"}` }],
      queued: 0,
      jobs: 0,
    });
  });

  it('completes an order whose items were all stored before without storing one', async () => {
    const id = await paidRcaOrder(h, receiving, TODAY);
    const done = await completeIssuedOrder(h.service.svc.db, {
      orderId: id,
      from: 'paid',
      item: undefined,
      eventId: 'evt_completion_e',
      at: new Date(),
    });
    expect(done).toEqual({ moved: true, queued: true });
    expect(await footprint(id)).toMatchObject({ status: 'completed', documents: 0, history: 1, queued: 1 });
  });
});

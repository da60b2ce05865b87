import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { deliverEvent } from '../../src/app/deliver-webhook.ts';
import { refundLockedOrder } from '../../src/app/refund-order.ts';
import { findOrder, lockOrder } from '../../src/db/repos/orders.ts';
import { findOrderEvent, settleAttempt, type WebhookEventRow } from '../../src/db/repos/webhooks.ts';
import { startHarness, type Harness } from '../support/harness.ts';
import { paidRcaOrder } from '../support/orders.ts';

/**
 * The events of one order are delivered in order: an event created while an earlier one is open
 * (waiting or pending) waits, and is released when the earlier one settles. These tests interleave,
 * by hand and on the real database, a refund's transaction (which creates the `refunded` event)
 * with the settling of the order's `completed` event, in the order that once lost the refund's
 * webhook: the refund's event inserted as waiting (the completed one still pending to it), then the
 * completed event settled before the refund commits. The refunded event must not be left waiting
 * behind an event that is already delivered.
 *
 * The retry schedule is an hour: the completed event's first attempt is refused, so it stays
 * pending with no worker touching it, and each test settles it itself at the moment it chooses.
 */
const TODAY = '2026-11-21';
let h: Harness;
let base: string;
/** Bodies received per path; the first request to each path is answered 500, the others 200. */
const hits = new Map<string, string[]>();
const receiver: Server = createServer((req, res) => {
  const chunks: Buffer[] = [];
  req.on('data', (c: Buffer) => chunks.push(c));
  req.on('end', () => {
    const got = [...(hits.get(req.url!) ?? []), Buffer.concat(chunks).toString()];
    hits.set(req.url!, got);
    res.writeHead(got.length === 1 ? 500 : 200).end();
  });
});

beforeAll(async () => {
  await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', resolve));
  base = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}`;
  h = await startHarness({ env: { WEBHOOK_RETRY_SCHEDULE: '3600' } });
  await h.setClock(`${TODAY}T12:00:00+02:00`);
});
afterAll(async () => {
  // The service keeps its connections to the receiver alive between deliveries.
  receiver.closeAllConnections();
  await h?.close();
  await new Promise((r) => receiver.close(r));
});

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
async function waitFor<T>(what: string, f: () => Promise<T | undefined | false>, ms = 15_000): Promise<T> {
  const deadline = Date.now() + ms;
  for (;;) {
    const v = await f();
    if (v) return v;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await sleep(50);
  }
}

/**
 * A completed order of a partner that receives completed and refunded events, its completed event
 * pending after a refused first attempt.
 */
async function completedOrderWithPendingEvent(path: string): Promise<{ id: string; event: WebhookEventRow }> {
  const p = await h.newPartner({ name: `Race ${path}`, webhook_url: `${base}${path}` });
  await h.admin('PATCH', `/admin/partners/${p.id}`, { webhook_events: ['completed', 'refunded'] });
  const id = await paidRcaOrder(h, p, TODAY);
  await h.waitForStatus(id, 'completed', { creds: p });
  const event = await waitFor('the refused first attempt', async () => {
    const e = await findOrderEvent(h.service.svc.db, id, 'completed');
    return e && e.attempts === 1 && e.state === 'pending' && e;
  });
  return { id, event };
}

/**
 * How the transaction that creates the refunded event holds the order: the operator's refund locks
 * its row FOR UPDATE (refundOrder); a transition from a worker (issuance, expiry) holds it only by
 * the UPDATE that moves its status. Either way the order is refunded by refundLockedOrder, the
 * refund's own code, and the transaction is held open after its statements until commit().
 */
type Creator = 'refund' | 'transition';

async function openRefund(id: string, creator: Creator): Promise<{ commit(): Promise<void> }> {
  const svc = h.service.svc;
  let release!: () => void;
  const gate = new Promise<void>((r) => (release = r));
  let ready!: () => void;
  const opened = new Promise<void>((r) => (ready = r));
  const at = new Date(await svc.clock.now());
  const done = svc.db.transaction().execute(async (trx) => {
    const order = creator === 'refund' ? await lockOrder(trx, id) : await findOrder(trx, id);
    await refundLockedOrder(svc, trx, order!, {
      reason: 'race',
      actor: 'test',
      at,
      failureReason: 'Refunded by the operator: race',
    });
    // Inside this transaction the refunded event waits behind the completed one, still pending.
    expect((await findOrderEvent(trx, id, 'refunded'))?.state).toBe('waiting');
    ready();
    await gate;
  });
  await Promise.race([opened, done]);
  return {
    async commit() {
      release();
      await done;
    },
  };
}

/**
 * Until `p` settles or a statement of this database waits for a row lock (the settle meeting the
 * refund's lock): either way the settle has gone as far as it can before the refund commits.
 */
async function blockedOrDone(p: Promise<unknown>): Promise<void> {
  let settled = false;
  p.then(
    () => (settled = true),
    () => (settled = true),
  );
  await waitFor('the settle to finish or wait for a lock', async () => {
    if (settled) return true;
    const { rows } = await sql<{ n: number }>`
      select count(*)::int as n from pg_stat_activity
      where datname = current_database() and wait_event_type = 'Lock'
        and wait_event in ('transactionid', 'tuple')`.execute(h.service.svc.db);
    return rows[0]!.n > 0;
  });
}

const refundedEvent = async (id: string) => (await findOrderEvent(h.service.svc.db, id, 'refunded'))!;

/** The refunded event is released (pending, its job enqueued) and then delivered by the workers. */
async function expectRefundedDelivered(id: string, path: string): Promise<void> {
  expect(['pending', 'delivered']).toContain((await refundedEvent(id)).state);
  await waitFor('the refunded event delivered', async () => (await refundedEvent(id)).state === 'delivered');
  expect(hits.get(path)!.at(-1)).toBe(`{"orderId":"${id}","status":"refunded"}`);
}

describe.each<Creator>(['refund', 'transition'])(
  'an event created while the earlier one of its order settles (%s)',
  (creator) => {
    it('is released when the delivery path settles the earlier one before the refund commits', async () => {
      const path = `/deliver-${creator}`;
      const { id, event } = await completedOrderWithPendingEvent(path);
      const refund = await openRefund(id, creator);
      const delivering = deliverEvent(h.service.svc, event.id);
      await blockedOrDone(delivering);
      await refund.commit();
      expect(await delivering).toMatchObject({ delivered: true, httpStatus: 200 });
      expect((await findOrderEvent(h.service.svc.db, id, 'completed'))!.state).toBe('delivered');
      await expectRefundedDelivered(id, path);
    });

    it("is released when the operator's re-send delivers the earlier one before the refund commits", async () => {
      const path = `/resend-${creator}`;
      const { id, event } = await completedOrderWithPendingEvent(path);
      const refund = await openRefund(id, creator);
      const resending = h.admin('POST', `/admin/orders/${id}/webhook`);
      await blockedOrDone(resending);
      await refund.commit();
      expect((await resending).body).toMatchObject({ delivered: true, eventId: event.id });
      expect((await findOrderEvent(h.service.svc.db, id, 'completed'))!.state).toBe('delivered');
      await expectRefundedDelivered(id, path);
    });

    it('is released by settleAttempt (the transactional settle) that waited for the refund', async () => {
      const path = `/settle-${creator}`;
      const { id, event } = await completedOrderWithPendingEvent(path);
      const svc = h.service.svc;
      const refund = await openRefund(id, creator);
      const at = new Date(await svc.clock.now());
      const settling = svc.db.transaction().execute((trx) =>
        settleAttempt(
          trx,
          {
            orderId: id,
            eventId: event.id,
            attempt: 2,
            url: `${base}${path}`,
            trigger: 'automatic',
            at,
            httpStatus: 200,
            error: null,
            latencyMs: 1,
          },
          { attempts: 2, state: 'delivered', nextAt: null, at },
        ),
      );
      await blockedOrDone(settling);
      await refund.commit();
      const settled = await settling;
      const refunded = await refundedEvent(id);
      // The caller (deliverEvent) enqueues the released event's job with this answer.
      expect(settled).toEqual({ updated: true, next: refunded.id });
      expect(refunded.state).toBe('pending');
    });
  },
);

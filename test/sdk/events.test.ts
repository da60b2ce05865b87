import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Polita, PolitaNotFoundError, type EventsPage } from '../../sdk/src/index.ts';
import { startHarness, type Creds, type Harness } from '../support/harness.ts';
import { paidRcaOrder } from '../support/orders.ts';

/** The SDK's listEvents and resendEvent against the whole service on 127.0.0.1 (decision 0091). */
const TODAY = '2026-11-21';
let h: Harness;
let baseUrl: string;
let receiver: Server;
let hookUrl: string;
const received: { id: string; body: string }[] = [];

beforeAll(async () => {
  receiver = createServer((req, res) => {
    let body = '';
    req.on('data', (c: Buffer) => (body += c.toString()));
    req.on('end', () => {
      received.push({ id: String(req.headers['x-polita-event-id']), body });
      res.writeHead(204).end();
    });
  });
  await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', resolve));
  hookUrl = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/hook`;
  h = await startHarness();
  await h.setClock(`${TODAY}T12:00:00+02:00`);
  baseUrl = await h.listen();
});
afterAll(async () => {
  await h?.close();
  await new Promise((r) => receiver?.close(r));
});

const client = (p: Creds) => new Polita({ baseUrl, partnerId: p.id, secret: p.secret, retryDelayMs: 10 });

describe('listEvents and resendEvent', () => {
  it('iterate over every page after a cursor, and re-send an event to the current URL', async () => {
    const p = await h.newPartner({ name: 'SDK events' });
    const orders: string[] = [];
    for (let i = 0; i < 5; i++) {
      const id = await paidRcaOrder(h, p, TODAY);
      await h.waitForStatus(id, 'completed', { creds: p });
      orders.push(id);
    }
    const polita = client(p);
    const pages: EventsPage[] = [];
    for await (const page of polita.listEvents({ limit: 2 })) pages.push(page);
    expect(pages.map((x) => x.events.length)).toEqual([2, 2, 1]);
    expect(pages.map((x) => x.has_more)).toEqual([true, true, false]);
    const events = pages.flatMap((x) => x.events);
    expect(events.map((e) => e.order_id)).toEqual(orders);
    expect(events.every((e) => e.type === 'completed' && e.delivery.status === 'not_subscribed')).toBe(true);

    // A catch-up from the second event on.
    const rest: string[] = [];
    for await (const page of polita.listEvents({ after: events[1]!.id })) {
      rest.push(...page.events.map((e) => e.order_id));
    }
    expect(rest).toEqual(orders.slice(2));

    await h.admin('PATCH', `/admin/partners/${p.id}`, { webhook_url: hookUrl });
    await expect(polita.resendEvent({ id: events[0]!.id })).resolves.toEqual({
      id: events[0]!.id,
      delivery: 'queued',
    });
    for (let i = 0; i < 100 && received.length === 0; i++) await new Promise((r) => setTimeout(r, 50));
    expect(received).toEqual([
      { id: events[0]!.id, body: `{"orderId":"${orders[0]}","status":"completed"}` },
    ]);
    await expect(polita.resendEvent({ id: 'evt_000000000000000000000000' })).rejects.toBeInstanceOf(
      PolitaNotFoundError,
    );
  });
});

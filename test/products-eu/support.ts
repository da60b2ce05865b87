import { createServer, type IncomingHttpHeaders } from 'node:http';
import type { AddressInfo } from 'node:net';
import { expect } from 'vitest';
import { signatureHeader } from '../../src/signature.ts';
import { payment, type Creds, type Harness } from '../support/harness.ts';
import { extractPdfText } from '../support/pdf-text.ts';

export { partnerWithMargin } from '../support/orders.ts';

/** Every test here runs on this sandbox clock: 21 November 2026, 10:00 in Chișinău. */
export const CLOCK = '2026-11-21T10:00:00+02:00';
export const TODAY = '2026-11-21';

/** A payment dated on the sandbox clock (confirm-order checks paid_at against it). */
export const clockPayment = (amount: number) => payment(amount, { paid_at: Date.parse(CLOCK) + 1_000 });

export const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** A partner with its own orders, so "nothing stored" is a count of its orders. */
export async function storedOrders(h: Harness, partnerId: string): Promise<number> {
  const res = await h.admin<{ orders: unknown[] }>('GET', `/admin/orders?partner_id=${partnerId}`);
  expect(res.status).toBe(200);
  return res.body.orders.length;
}

export async function pdfTextOf(h: Harness, fileUrl: string): Promise<string> {
  const pdf = await h.service.app.inject({ method: 'GET', url: new URL(fileUrl).pathname });
  expect(pdf.statusCode).toBe(200);
  expect(pdf.headers['content-type']).toBe('application/pdf');
  return extractPdfText(pdf.rawPayload);
}

export interface WebhookSink {
  url: string;
  received: { body: string; headers: IncomingHttpHeaders }[];
  close(): Promise<void>;
}

/** A real HTTP receiver on a random loopback port, answering 200 to every webhook. */
export async function webhookSink(): Promise<WebhookSink> {
  const received: WebhookSink['received'] = [];
  const server = createServer((req, res) => {
    let body = '';
    req.setEncoding('utf8');
    req.on('data', (c: string) => (body += c));
    req.on('end', () => {
      received.push({ body, headers: req.headers });
      res.writeHead(200, { 'content-type': 'text/plain' }).end('ok');
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/polita-hook`,
    received,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

/**
 * Confirms an asynchronously issued order and polls it: it must be seen in `processing`, no webhook
 * may arrive while it is not yet completed, and exactly one arrives after, signed and with the spec's body.
 */
export async function confirmAndWatchAsync(
  h: Harness,
  creds: Creds,
  sink: WebhookSink,
  id: string,
  price: number,
): Promise<Record<string, unknown>> {
  const confirmed = await h.call('confirm-order', { id, payment: clockPayment(price) }, creds);
  expect(confirmed.status, JSON.stringify(confirmed.body)).toBe(200);
  expect(confirmed.body.status).toBe('paid');
  const seen: string[] = [];
  const deadline = Date.now() + 20_000;
  let last: Record<string, unknown> = {};
  while (Date.now() < deadline) {
    const got = await h.call('get-order', { id }, creds);
    last = got.body;
    const status = last.status as string;
    if (seen.at(-1) !== status) seen.push(status);
    if (status === 'completed') break;
    expect(status).not.toBe('failed');
    expect(last.products, 'no products before completion').toBeUndefined();
    expect(sink.received, `a webhook arrived while the order was ${status}`).toHaveLength(0);
    await sleep(50);
  }
  expect(seen).toContain('processing');
  expect(seen.at(-1)).toBe('completed');
  while (sink.received.length === 0 && Date.now() < deadline) await sleep(50);
  await sleep(500); // room for a duplicate to show up
  expect(sink.received).toHaveLength(1);
  const hook = sink.received[0]!;
  expect(JSON.parse(hook.body)).toEqual({ orderId: id, status: 'completed' });
  expect(hook.headers['x-hmac-signature']).toBe(signatureHeader(creds.id, creds.secret, hook.body));
  return last;
}

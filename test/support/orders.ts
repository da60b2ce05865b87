import { expect } from 'vitest';
import { harnessAt, payment, rcaItem, type Creds, type Harness } from './harness.ts';
import { extractPdfText } from './pdf-text.ts';

/** A partner with a margin (in basis points), optionally with a webhook URL, created by the operator. */
export async function partnerWithMargin(
  h: Harness,
  marginBp: number,
  webhookUrl?: string,
  name = 'Agenția Test',
): Promise<Creds> {
  const res = await h.admin<{ id: string; secret: string }>('POST', '/admin/partners', {
    name,
    margin_bp: marginBp,
    ...(webhookUrl ? { webhook_url: webhookUrl } : {}),
  });
  expect(res.status, JSON.stringify(res.body)).toBe(201);
  return { id: res.body.id, secret: res.body.secret };
}

/**
 * A test file's service: a harness with its clock at `now` and a partner with a `marginBp` margin,
 * so every price a test sees carries the margin on top of the tariff.
 */
export async function harnessWithPartner(
  now: string,
  partnerName: string,
  marginBp: number,
): Promise<{ h: Harness; partner: Creds }> {
  const h = await harnessAt(now);
  return { h, partner: await partnerWithMargin(h, marginBp, undefined, partnerName) };
}

/**
 * An order of `creds` for `products`, created for `customer` and paid, by confirm-order (a customer
 * payment dated the sandbox clock's now) or from the partner's wallet; answers its id and price.
 */
export async function paidOrder(
  h: Harness,
  creds: Creds,
  products: Record<string, unknown>[],
  via: 'confirm-order' | 'pay-order-from-balance' = 'confirm-order',
  customer: Record<string, string> = { phone: '+37369000000' },
): Promise<{ id: string; price: number }> {
  const created = await h.call<{ id: string; price: number }>('create-order', { customer, products }, creds);
  expect(created.status, JSON.stringify(created.body)).toBe(200);
  const { id, price } = created.body;
  const paid =
    via === 'pay-order-from-balance'
      ? await h.call('pay-order-from-balance', { id }, creds)
      : await h.call(
          'confirm-order',
          { id, payment: payment(price, { paid_at: await h.service.svc.clock.now() }) },
          creds,
        );
  expect(paid.status, JSON.stringify(paid.body)).toBe(200);
  return { id, price };
}

/**
 * An rca order of `creds` for `day` (yyyy-mm-dd, the sandbox clock's day), created and paid, by
 * confirm-order (a customer payment) or from the partner's wallet; returns its id.
 */
export async function paidRcaOrder(
  h: Harness,
  creds: Creds,
  day: string,
  o: { item?: Record<string, unknown>; via?: 'confirm-order' | 'pay-order-from-balance' } = {},
): Promise<string> {
  return (await paidOrder(h, creds, [rcaItem(day, o.item)], o.via)).id;
}

/** The partner's order ids, newest first, as the operator sees them: proves whether anything was stored. */
export async function storedOrders(h: Harness, partner: Creds): Promise<string[]> {
  const res = await h.admin<{ orders: { id: string }[] }>('GET', `/admin/orders?partner_id=${partner.id}`);
  return res.body.orders.map((o) => o.id);
}

/**
 * Confirms a draft with a payment dated `paidAt` (the sandbox clock's time), waits for `completed`,
 * and downloads every policy PDF, returning the order, its issued products and each PDF's text.
 */
export async function completeAndDownload(
  h: Harness,
  partner: Creds,
  id: string,
  price: number,
  paidAt: number,
) {
  const confirmed = await h.call(
    'confirm-order',
    { id, payment: payment(price, { paid_at: paidAt }) },
    partner,
  );
  expect(confirmed.status).toBe(200);
  expect(confirmed.body.status).toBe('paid');
  const done = await h.waitForStatus(id, 'completed', { creds: partner });
  const products = done.body.products as Record<string, unknown>[];
  const pdfs: string[] = [];
  for (const p of products) {
    expect(p.file).toMatch(/^http:\/\/polita\.test\/files\/[0-9a-f]{32}\.pdf$/);
    const res = await h.service.app.inject({ method: 'GET', url: new URL(p.file as string).pathname });
    expect(res.statusCode).toBe(200);
    expect(res.headers['content-type']).toBe('application/pdf');
    pdfs.push(await extractPdfText(res.rawPayload));
  }
  return { order: done.body, products, pdfs };
}

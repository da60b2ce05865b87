import { expect } from 'vitest';
import { payment, type Creds, type Harness } from './harness.ts';
import { extractPdfText } from './pdf-text.ts';

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

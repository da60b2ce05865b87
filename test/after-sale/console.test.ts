import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { signedInConsole } from '../support/console.ts';
import type { Harness } from '../support/harness.ts';
import { completedOrder, harnessAtNow, mdItem, rcaOrder } from './support.ts';

/** The console says who cancelled or corrected an order, and when: on the order's page and in the audit log. */
let h: Harness;
let cookie: string;
beforeAll(async () => ({ h, cookie } = await signedInConsole(harnessAtNow())));
afterAll(() => h?.close());

const text = (html: string) =>
  html
    .replace(/<\/dt>\s*<dd>/g, ': ')
    .replace(/<[^>]+>/g, ' ')
    .replace(/\s+/g, ' ');
const page = async (url: string) => {
  const res = await h.service.app.inject({ method: 'GET', url, headers: { cookie } });
  expect(res.statusCode).toBe(200);
  return text(res.body);
};

describe('the console after the sale', () => {
  it('shows a partner’s cancellation on the order’s page and in the audit log', async () => {
    const { id, price } = await rcaOrder(h, h.demo, '2026-12-05', 'customer');
    const quote = (await h.call<{ quote_id: string }>('cancel-order', { id })).body.quote_id;
    expect((await h.call('cancel-order', { id, quote_id: quote })).status).toBe(200);
    const order = await page(`/console/orders/${id}`);
    expect(order).toContain(`Amount: ${price.toFixed(2)} MDL (customer)`);
    expect(order).toContain('cancelled by the partner: the partner owes it to its customer');
    expect(order).toMatch(new RegExp(`By: partner:${h.demo.id}, 2026-12-01 10:00`));
    const audit = await page(`/console/audit?target=${id}`);
    expect(audit).toContain('order.cancel');
    expect(audit).toContain(`partner:${h.demo.id}`);
  });

  it('shows who corrected an order and when', async () => {
    const { id } = await completedOrder(h, h.demo, [mdItem('2026-12-10')], 'wallet');
    const changes = { start_date: '2026-12-11' };
    const quote = (await h.call<{ quote_id: string }>('correct-order', { id, changes })).body.quote_id;
    expect((await h.call('correct-order', { id, changes, quote_id: quote })).status).toBe(200);
    const order = await page(`/console/orders/${id}`);
    expect(order).toMatch(new RegExp(`Corrected: 2026-12-01 10:00:\\d\\d by partner:${h.demo.id}`));
  });
});

import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ISSUED_LABELS, UNLABELLED } from '../../src/console/issued.ts';
import { localDate } from '../../src/domain/time.ts';
import { PRODUCT_MODULES } from '../../src/products/registry.ts';
import { signedInConsole } from '../support/console.ts';
import { rcaItem, type Harness } from '../support/harness.ts';
import { paidRcaOrder } from '../support/orders.ts';

/** The console's order page in words a support agent reads: the issued fields, or why there is no policy. */
let h: Harness;
let cookie: string;
beforeAll(async () => ({ h, cookie } = await signedInConsole()));
afterAll(async () => {
  await h?.close();
});

/** The Issued cell of each product row of an order's page, as text. */
async function issuedCells(id: string): Promise<string[]> {
  const page = await h.service.app.inject({
    method: 'GET',
    url: `/console/orders/${id}`,
    headers: { cookie },
  });
  expect(page.statusCode).toBe(200);
  const products = /<h2>Products<\/h2>([\s\S]*?)<\/table>/.exec(page.body)![1]!;
  return [...products.matchAll(/<td class="issued">([\s\S]*?)<\/td>/g)].map((m) =>
    m[1]!
      .replace(/<\/dt>\s*<dd>/g, ': ')
      .replace(/<[^>]+>/g, ' ')
      .replace(/\s+/g, ' ')
      .trim(),
  );
}
const today = async () => localDate(await h.service.svc.clock.now());

describe('an order’s Issued column', () => {
  it('labels a completed policy’s fields in words, not the wire’s keys', async () => {
    const id = await paidRcaOrder(h, h.demo, await today());
    await h.waitForStatus(id, 'completed');
    const [cell] = await issuedCells(id);
    expect(cell).toContain('Plate number: CHY999');
    expect(cell).toContain('Car model: HONDA CIVIC');
    expect(cell).toMatch(/Reference price: [\d.]+ MDL/);
    expect(cell).toMatch(/Exchange rate: 1 MDL 1\.0000 MDL/);
    expect(cell).toMatch(/Price: [\d]+\.\d\d MDL/);
    // In the product's own order, without the raw keys, the product's code or the bare currency.
    expect(cell!.indexOf('Plate number')).toBeLessThan(cell!.indexOf('Price'));
    expect(cell).not.toMatch(/plate_number|reference_exchange_rate|_/);
    expect(cell).not.toContain('Currency');
  });

  it('says a failed order has no policy, and a failed then refunded one too', async () => {
    const id = await paidRcaOrder(h, h.demo, await today(), { item: { vehicle: '100000010' } });
    await h.waitForStatus(id, 'failed');
    expect(await issuedCells(id)).toEqual(['No policy: the order failed']);
    expect((await h.admin('POST', `/admin/orders/${id}/refund`, { reason: 'provider refused' })).status).toBe(
      200,
    );
    expect(await issuedCells(id)).toEqual(['No policy: the order failed and was refunded']);
  });

  it('says a draft is not paid, and a refunded policy was issued first', async () => {
    const draft = await h.call<{ id: string }>('create-order', {
      customer: { phone: '+37369000000' },
      products: [rcaItem(await today())],
    });
    expect(await issuedCells(draft.body.id)).toEqual(['Not yet: the order is not paid']);
    const id = await paidRcaOrder(h, h.demo, await today());
    await h.waitForStatus(id, 'completed');
    await h.admin('POST', `/admin/orders/${id}/refund`, { reason: 'customer cancelled' });
    const [cell] = await issuedCells(id);
    expect(cell).toMatch(/^Issued, then refunded Plate number: CHY999/);
  });

  it('has a label for every issued field of every product', () => {
    const fields = PRODUCT_MODULES.flatMap((m) => Object.keys(m.schemas.issued));
    expect(fields.filter((k) => !ISSUED_LABELS.has(k) && !UNLABELLED.has(k))).toEqual([]);
  });
});

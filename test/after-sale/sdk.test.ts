import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Polita, PolitaConflictError, type CancelOrderPreview, type Order } from '../../sdk/src/index.ts';
import { startHarness, type Harness } from '../support/harness.ts';
import { completedOrder, mdItem, rcaOrder } from './support.ts';

/** cancelOrder and correctOrder of the SDK against the whole service on 127.0.0.1. */
let h: Harness;
let polita: Polita;

beforeAll(async () => {
  h = await startHarness();
  await h.setClock('2026-12-01T10:00:00+02:00');
  polita = new Polita({
    baseUrl: await h.listen(),
    partnerId: h.demo.id,
    secret: h.demo.secret,
    retryDelayMs: 10,
  });
});
afterAll(() => h?.close());

describe('the SDK after the sale', () => {
  it('previews a cancellation, confirms it with the quote and gets the refunded order', async () => {
    const { id, price } = await rcaOrder(h, h.demo, '2026-12-05', 'wallet');
    const preview: CancelOrderPreview = await polita.cancelOrder({ id });
    expect(preview).toMatchObject({ cancellable: true, refund: { amount: price, fee: 0, to: 'wallet' } });
    const order: Order = await polita.cancelOrder({ id, quote_id: preview.quote_id! });
    expect(order).toMatchObject({ id, status: 'refunded', refund: { amount: price, to: 'wallet' } });
    await expect(polita.cancelOrder({ id, quote_id: 'cq_unknown' })).rejects.toBeInstanceOf(
      PolitaConflictError,
    );
  });

  it('previews a correction and confirms it', async () => {
    const { id } = await completedOrder(h, h.demo, [mdItem('2026-12-10')], 'wallet');
    const changes = { plate_number: 'B CD 5678' };
    const preview = await polita.correctOrder({ id, changes });
    expect(preview.correctable).toBe(true);
    const order = await polita.correctOrder({ id, changes, quote_id: preview.quote_id! });
    expect(order.status).toBe('completed');
    expect(order.products?.[0]).toMatchObject({ registration_number: 'B CD 5678' });
  });
});

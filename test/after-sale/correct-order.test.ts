import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Creds, Harness } from '../support/harness.ts';
import { extractPdfText } from '../support/pdf-text.ts';
import {
  completedOrder,
  expectBooksClean,
  harnessAtNow,
  NOW,
  mdItem,
  orderState,
  rcaOrder,
} from './support.ts';

let h: Harness;
beforeAll(async () => (h = await harnessAtNow()));
afterAll(() => h?.close());

interface Answer {
  id: string;
  correctable?: boolean;
  quote_id?: string;
  valid_until?: string;
  reason?: string;
  message?: string;
  status?: string;
  start_date?: string;
  end_date?: string;
  products?: Record<string, unknown>[];
}

const correct = (id: string, changes: Record<string, unknown>, quote_id?: string, creds: Creds = h.demo) =>
  h.call<Answer>('correct-order', { id, changes, ...(quote_id ? { quote_id } : {}) }, creds);

const fileOf = (a: Answer) => String(a.products![0]!.file).replace('http://polita.test', '');
const fetchFile = async (path: string) => (await h.service.app.inject({ url: path })).statusCode;

describe('correct-order of a vignette before its first day', () => {
  it('previews without changing anything, then re-issues with the new plate and start date', async () => {
    await h.setClock(NOW);
    const { id } = await completedOrder(h, h.demo, [mdItem('2026-12-10')], 'wallet');
    const before = (await h.call<Answer>('get-order', { id })).body;
    const oldFile = fileOf(before);
    const changes = { plate_number: 'B CD 5678', start_date: '2026-12-12' };
    const p = await correct(id, changes);
    expect(p.status, JSON.stringify(p.body)).toBe(200);
    expect(p.body).toEqual({
      id,
      correctable: true,
      quote_id: expect.stringMatching(/^xq_[0-9a-f]{32}$/),
      valid_until: expect.any(String),
    });
    expect((await h.call('get-order', { id })).body).toEqual(before);

    const c = await correct(id, changes, p.body.quote_id);
    expect(c.status, JSON.stringify(c.body)).toBe(200);
    expect(c.body).toMatchObject({
      id,
      status: 'completed',
      start_date: '2026-12-12',
      end_date: '2026-12-18',
    });
    expect(c.body.products![0]).toMatchObject({
      registration_number: 'B CD 5678',
      start_date: '2026-12-12',
      end_date: '2026-12-18',
    });
    expect(fileOf(c.body)).not.toBe(oldFile);
    expect(await fetchFile(oldFile)).toBe(410);
    expect(await fetchFile(fileOf(c.body))).toBe(200);
    // The re-issued policy is rendered as issuance renders one: a sandbox's is a specimen.
    const pdf = await h.service.app.inject({ url: fileOf(c.body) });
    const text = await extractPdfText(pdf.rawPayload);
    expect(text).toContain('SPECIMEN — sandbox');
    expect(text).toContain('B CD 5678');

    // The same confirmation again answers the same order.
    const again = await correct(id, changes, p.body.quote_id);
    expect(again.status).toBe(200);
    expect(again.body).toEqual(c.body);

    // The corrected event, for a partner subscribed to it (listed whether or not it is).
    const events = await h.call<{ events: { type: string; data: unknown }[] }>('list-events', {
      order_id: id,
      types: ['corrected'],
    });
    expect(events.status, JSON.stringify(events.body)).toBe(200);
    expect(events.body.events).toEqual([
      expect.objectContaining({
        type: 'corrected',
        data: { orderId: id, status: 'completed', event: 'corrected' },
      }),
    ]);

    // Once per order.
    const second = await correct(id, { plate_number: 'B EF 9012' });
    expect(second.body).toEqual({
      id,
      correctable: false,
      reason: 'The order has already been corrected once',
    });

    const detail = await h.admin<{ corrected_at: string | null; corrected_by: string | null }>(
      'GET',
      `/admin/orders/${id}`,
    );
    expect(detail.body).toMatchObject({
      corrected_by: `partner:${h.demo.id}`,
      corrected_at: expect.any(String),
    });
    await expectBooksClean(h);
  });
});

describe('correct-order of a vignette:eu', () => {
  it('answers processing until the provider has issued the corrected vignette again', async () => {
    await h.setClock(NOW);
    const eu = {
      product: 'vignette:eu',
      country: 'HU',
      validity: '10d',
      start_date: '2026-12-10',
      foreign_vehicle: {
        registration_country: 'AT',
        category: 'M1',
        plate_number: 'W 12345 X',
        vin: 'WVWZZZ1KZAW000123',
        make: 'Volkswagen',
        model: 'Golf',
        places: 5,
        max_authorized_mass: 1800,
      },
    };
    const { id } = await completedOrder(h, h.demo, [eu], 'wallet');
    const before = (await h.call<Answer>('get-order', { id })).body;
    const changes = { plate_number: 'W 54321 X' };
    const p = await correct(id, changes);
    expect(p.body.correctable, JSON.stringify(p.body)).toBe(true);
    const c = await correct(id, changes, p.body.quote_id);
    expect(c.status, JSON.stringify(c.body)).toBe(200);
    expect(c.body.status).toBe('processing');
    expect(await fetchFile(fileOf(before))).toBe(410);
    const done = await h.waitForStatus(id, 'completed');
    const after = done.body as unknown as Answer;
    expect(after.products![0]).toMatchObject({ plate_number: 'W 54321 X' });
    expect(fileOf(after)).not.toBe(fileOf(before));
    expect(await fetchFile(fileOf(after))).toBe(200);
    await expectBooksClean(h);
  });
});

describe('correct-order refusals', () => {
  it('refuses a field that may not change, by name, and changes nothing', async () => {
    await h.setClock(NOW);
    const { id } = await completedOrder(h, h.demo, [mdItem('2026-12-10')], 'wallet');
    const state = await orderState(h, id);
    const r = await correct(id, { customer: { phone: '+37369111111' } });
    expect(r.status).toBe(400);
    expect(r.body.message).toBe(
      'changes.customer cannot be corrected: only changes.plate_number and changes.start_date can',
    );
    expect(await orderState(h, id)).toEqual(state);
  });

  it('says an rca cannot be corrected', async () => {
    await h.setClock(NOW);
    const { id } = await rcaOrder(h, h.demo, '2026-12-05', 'wallet');
    const r = await correct(id, { start_date: '2026-12-06' });
    expect(r.body).toEqual({ id, correctable: false, reason: 'A rca policy cannot be corrected' });
  });

  it('says a valid vignette cannot be corrected after its first 15 minutes', async () => {
    await h.setClock(NOW);
    const { id } = await completedOrder(h, h.demo, [mdItem('2026-12-01')], 'wallet');
    const early = await correct(id, { plate_number: 'B CD 5678' });
    expect(early.body.correctable).toBe(true);
    await h.setClock('2026-12-01T10:30:00+02:00');
    const late = await correct(id, { plate_number: 'B CD 5678' });
    expect(late.body).toMatchObject({ correctable: false, reason: expect.stringContaining('15 minutes') });
    // The early quote no longer holds either.
    const stale = await correct(id, { plate_number: 'B CD 5678' }, early.body.quote_id);
    expect(stale.status).toBe(409);
    expect(stale.body.message).toBe('Correction quote expired: preview again');
  });

  it('answers 409 when the confirmation names other changes than its preview', async () => {
    await h.setClock(NOW);
    const { id } = await completedOrder(h, h.demo, [mdItem('2026-12-10')], 'wallet');
    const p = await correct(id, { plate_number: 'B CD 5678' });
    const other = await correct(id, { plate_number: 'B XX 1111' }, p.body.quote_id);
    expect(other.status).toBe(409);
  });

  it('answers 404 for another partner’s order', async () => {
    await h.setClock(NOW);
    const { id } = await completedOrder(h, h.demo, [mdItem('2026-12-10')], 'wallet');
    const other = await h.newPartner();
    const r = await correct(id, { plate_number: 'B CD 5678' }, undefined, other);
    expect(r.status).toBe(404);
    expect(r.body.message).toBe('Order not found');
  });
});

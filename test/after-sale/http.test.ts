import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Creds, Harness } from '../support/harness.ts';
import { signedPost } from '../support/signed.ts';
import { harnessAtNow, onlineBalance, rcaOrder } from './support.ts';

/** cancel-order and correct-order as every /v1 write: idempotency keys, the rate limit, the signature. */
let h: Harness;
beforeAll(async () => {
  h = await harnessAtNow();
});
afterAll(() => h?.close());

const send = (endpoint: string, body: unknown, key?: string, creds: Creds = h.demo) =>
  signedPost(h, endpoint, body, key, creds);

describe('cancel-order and correct-order on the wire', () => {
  it('answers a repeated Idempotency-Key with the first answer, byte for byte, booking nothing again', async () => {
    const { id, price } = await rcaOrder(h, h.demo, '2026-12-05', 'wallet');
    const preview = await send('cancel-order', { id }, 'preview-1');
    const again = await send('cancel-order', { id }, 'preview-1');
    expect(again.body).toBe(preview.body);
    expect(again.headers['idempotent-replayed']).toBe('true');
    const quote = (preview.json() as { quote_id: string }).quote_id;
    const before = await onlineBalance(h, h.demo);
    const first = await send('cancel-order', { id, quote_id: quote }, 'confirm-1');
    const second = await send('cancel-order', { id, quote_id: quote }, 'confirm-1');
    expect(first.statusCode).toBe(200);
    expect(second.body).toBe(first.body);
    expect(second.headers['idempotent-replayed']).toBe('true');
    expect(await onlineBalance(h, h.demo)).toBeCloseTo(before + price, 2);
    const other = await send('cancel-order', { id: 'OTHER' }, 'confirm-1');
    expect(other.statusCode).toBe(409);
  });

  it('refuses an unsigned request and counts both endpoints against the partner’s limit', async () => {
    const unsigned = await h.service.app.inject({
      method: 'POST',
      url: '/v1/cancel-order',
      headers: { 'content-type': 'application/json' },
      payload: '{"id":"X"}',
    });
    expect(unsigned.statusCode).toBe(401);

    const created = await h.admin<{ id: string; secret: string }>('POST', '/admin/partners', {
      name: 'Limited',
      rate_limit_per_minute: 2,
    });
    const limited = { id: created.body.id, secret: created.body.secret };
    expect((await send('cancel-order', { id: 'X' }, undefined, limited)).statusCode).toBe(404);
    expect(
      (await send('correct-order', { id: 'X', changes: { start_date: '2026-12-02' } }, undefined, limited))
        .statusCode,
    ).toBe(404);
    // Another body: the same bytes in the same second would be a replay, counted apart (decision 0086).
    const over = await send('cancel-order', { id: 'Y' }, undefined, limited);
    expect(over.statusCode).toBe(429);
    expect(over.headers['retry-after']).toBeDefined();
  });

  it('refuses a correction without changes, and a malformed plate, naming the field', async () => {
    const empty = await send('correct-order', { id: 'X', changes: {} });
    expect(empty.statusCode).toBe(400);
    expect(empty.json().message).toContain('body/changes');
    const plate = await send('correct-order', { id: 'X', changes: { plate_number: 'AB!12' } });
    expect(plate.statusCode).toBe(400);
    expect(plate.json().message).toContain('body/changes/plate_number');
  });
});

import fastJson from 'fast-json-stringify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { quoteResponseOf, sharedSchemas } from '../../src/http/schemas.ts';
import { timestampedSignatureHeader } from '../../src/signature.ts';
import { startHarness, type Harness } from '../support/harness.ts';
import { guideExamples } from '../support/readme.ts';

/**
 * get-offers' 200 schema is a union of the products' answer shapes (medical has its own). Whatever
 * branch Fastify's serialiser tries first, and for medical through the service's own writer
 * (decision 0041), each answer is written in its own product's shape as fast-json-stringify writes
 * it: its fields in that schema's order, nothing the schema does not list.
 */
type Schema = Record<string, unknown>;
const byId = Object.fromEntries((sharedSchemas as unknown as Schema[]).map((s) => [s.$id as string, s]));
const ownShape = (product: string) => fastJson(quoteResponseOf(product) as never, { schema: byId as never });

let h: Harness;
beforeAll(async () => {
  h = await startHarness({ workers: false });
  await h.setClock('2026-11-21T10:00:00+02:00');
});
afterAll(() => h?.close());

describe('get-offers answers', () => {
  const offers = (payload: string) =>
    h.service.app.inject({
      method: 'POST',
      url: '/v1/get-offers',
      headers: {
        'content-type': 'application/json',
        'x-polita-signature': timestampedSignatureHeader(h.demo.id, h.demo.secret, 'get-offers', payload),
      },
      payload,
    });

  it.each(guideExamples('get-offers'))('are written in their product’s own shape: %s', async (payload) => {
    const res = await offers(payload);
    expect(res.statusCode, res.body).toBe(200);
    expect(res.headers['content-type']).toBe('application/json; charset=utf-8');
    const { product } = JSON.parse(payload) as { product: string };
    expect(res.body).toBe(ownShape(product)({ ...res.json<object>(), unlisted: 'dropped' }));
    // And a second time, when the medical writer reuses the bytes it kept.
    expect((await offers(payload)).body).toBe(res.body);
  });
});

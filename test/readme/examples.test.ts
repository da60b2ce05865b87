import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startHarness, type Harness } from '../support/harness.ts';
import { readmeExamples as examples } from '../support/readme.ts';

/**
 * Every example request the README shows must work: each get-offers body answers 200 with offers,
 * and each create-order body answers 200 with a draft, on the day the README's dates are written for.
 */
let h: Harness;
beforeAll(async () => {
  h = await startHarness();
  await h.setClock('2026-11-21T10:00:00+02:00');
});
afterAll(() => h?.close());

describe('README examples', () => {
  it.each(examples('get-offers'))('get-offers %s', async (body) => {
    const res = await h.call('get-offers', body);
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    const offers = res.body.offers;
    expect(Array.isArray(offers) ? offers.length : Object.keys(offers as object).length).toBeGreaterThan(0);
  });

  it.each(examples('create-order'))('create-order %s', async (body) => {
    const res = await h.call('create-order', body);
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    expect(res.body.status).toBe('draft');
  });
});

import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Clock } from '../../src/app/clock.ts';
import type { VehicleRegistry } from '../../src/providers/types.ts';
import { RCA_QUOTE, startHarness, type Harness } from '../support/harness.ts';

/**
 * Every get-offers answer, offers and refusals alike, is the same whether the clock and the vehicle
 * registry answer from memory (the sandbox's, between the clock's re-reads) or have to wait: a
 * registry that answers later (as a real one would) and a clock due to re-read the offset another
 * instance moved.
 */
const NOW = '2026-11-21T10:00:00+02:00';
const BODIES: Record<string, Record<string, unknown>> = {
  'rca offers': RCA_QUOTE,
  'rca, unknown vehicle (404)': { ...RCA_QUOTE, vehicle: '999999999' },
  'rca, idnx with a wrong check digit (400)': { ...RCA_QUOTE, idnx: '2003000000017' },
  'green-card offers': {
    product: 'green-card',
    region: 'EU',
    duration: 15,
    vehicle: '100000001',
    idnx: '2003000000016',
  },
  'road-tax, idnx not the owner (400)': { product: 'road-tax', vehicle: '100000001', idnx: '1021600002204' },
  'roadside offers': { product: 'roadside-assistance-eu', vehicle: '100000001' },
  'roadside, unknown vehicle (404)': { product: 'roadside-assistance-eu', vehicle: '999999999' },
  'vignette:eu offers': { product: 'vignette:eu', vehicle: '100000001', country: 'AT' },
};

let h: Harness;
beforeAll(async () => {
  h = await startHarness();
  await h.setClock(NOW);
});
afterAll(() => h?.close());

const answers = async () => {
  const out: Record<string, { status: number; type: unknown; body: unknown }> = {};
  for (const [name, body] of Object.entries(BODIES)) {
    const res = await h.call('get-offers', body);
    out[name] = { status: res.status, type: res.headers['content-type'], body: res.body };
  }
  return out;
};

describe('get-offers, its values from memory or awaited', () => {
  it('answers the same when the vehicle registry answers later', async () => {
    const atHand = await answers();
    expect(atHand['rca offers']!.status).toBe(200);
    // Offers and refusals alike are JSON (a refusal's type is the error mapper's, not the offers').
    for (const answer of Object.values(atHand))
      expect(answer.type).toMatch(/^application\/json; charset=utf-8$/);
    expect(atHand['rca, unknown vehicle (404)']).toEqual({
      status: 404,
      type: 'application/json; charset=utf-8',
      body: { statusCode: 404, error: 'Vehicle not found', message: 'Vehicle not found' },
    });
    expect(atHand['rca, idnx with a wrong check digit (400)']!.status).toBe(400);
    expect(atHand['road-tax, idnx not the owner (400)']).toMatchObject({
      status: 400,
      body: { error: 'idnx is not the registered owner of the vehicle' },
    });

    const providers = h.service.svc.providers;
    const sandbox = providers.vehicles;
    let asked = 0;
    const later: VehicleRegistry = {
      find: async (certificate) => {
        asked++;
        await new Promise((resolve) => setTimeout(resolve, 1));
        return sandbox.find(certificate);
      },
    };
    providers.vehicles = later;
    try {
      expect(await answers()).toEqual(atHand);
      expect(asked).toBe(Object.keys(BODIES).length);
    } finally {
      providers.vehicles = sandbox;
    }
  });

  it('answers the same, at the new time, when the clock re-reads an offset another instance moved', async () => {
    const before = await h.call<{ offers: { min_start_date: string }[] }>('get-offers', RCA_QUOTE);
    expect(before.body.offers[0]!.min_start_date).toBe('2026-11-21');
    await h.setClock('2026-11-23T10:00:00+02:00');
    const expected = await answers();
    await h.setClock(NOW);
    // Another instance on the same database moves the clock two days on: this one sees it at its
    // next re-read, at most a second later, in the request that makes it.
    await new Clock(h.service.svc.db, true).set(Date.parse('2026-11-23T10:00:00+02:00'));
    for (const [name, body] of Object.entries(BODIES)) {
      // Due for a re-read: each request below is the one that reads the offset again.
      await new Promise((resolve) => setTimeout(resolve, 1_100));
      const res = await h.call('get-offers', body);
      expect({ status: res.status, type: res.headers['content-type'], body: res.body }, name).toEqual(
        expected[name],
      );
    }
    const offers = (expected['rca offers']!.body as { offers: { min_start_date: string }[] }).offers;
    expect(offers.map((o) => o.min_start_date)).toEqual(offers.map(() => '2026-11-23'));
  });
});

import { createServer, request, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  Polita,
  PolitaAuthenticationError,
  PolitaConflictError,
  PolitaNotFoundError,
  PolitaProductRuleError,
  PolitaValidationError,
  PolitaWalletUnavailableError,
  WaitForOrderTimeoutError,
  type Order,
} from '../../sdk/src/index.ts';
import { payment, startHarness, type Harness } from '../support/harness.ts';
import { rcaItem } from './support.ts';

/** The SDK against the whole service listening on 127.0.0.1 (real database, sandbox providers). */
let h: Harness;
let baseUrl: string;
let polita: Polita;

beforeAll(async () => {
  h = await startHarness();
  baseUrl = await h.listen();
  polita = new Polita({ baseUrl, partnerId: h.demo.id, secret: h.demo.secret, retryDelayMs: 10 });
});
afterAll(() => h?.close());

/** An RCA draft for `vehicle`, from its first offer. */
async function rcaDraft(vehicle = '100000001', key?: string): Promise<Order> {
  const { offers } = await polita.getOffers({
    product: 'rca',
    vehicle,
    duration: 365,
    idnx: '2003000000016',
  });
  const offer = offers[0]!;
  return polita.createOrder(
    {
      customer: { phone: '+37369123456', name: 'Ion Popescu' },
      products: [rcaItem(offer.min_start_date!, { vehicle, insurance_company: offer.company! })],
    },
    key ? { idempotencyKey: key } : {},
  );
}

describe('the order flow', () => {
  it('quotes, creates, confirms and waits until the order is completed', async () => {
    const quote = await polita.getOffers({
      product: 'rca',
      vehicle: '100000001',
      duration: 365,
      idnx: '2003000000016',
    });
    expect(quote.offers.length).toBeGreaterThan(0);
    const draft = await rcaDraft();
    expect(draft).toMatchObject({ status: 'draft', currency: 'MDL', price: quote.offers[0]!.price });

    const paid = await polita.confirmOrder({ id: draft.id, payment: payment(draft.price) });
    expect(paid.status).toBe('paid');

    const done = await polita.waitForOrder(draft.id, { timeoutMs: 20_000, intervalMs: 100 });
    expect(done.status).toBe('completed');
    expect(done.products?.[0]).toMatchObject({ product: 'rca', plate_number: 'CHY999' });
    expect(done.products?.[0]?.file).toMatch(/^http:\/\/polita\.test\/files\//);
  });

  it('answers the medical quote in its own shape', async () => {
    const start = new Date(Date.now() + 3 * 86_400_000).toISOString().slice(0, 10);
    const end = new Date(Date.now() + 10 * 86_400_000).toISOString().slice(0, 10);
    const quote = await polita.getOffers({
      product: 'medical',
      covered_territories: ['EUROPE'],
      persons: ['1990-05-01'],
      start_date: start,
      end_date: end,
      is_multiple_type: false,
      include_additional_risk: false,
      activity: 'TRVL',
    });
    expect(quote.product).toBe('medical');
    const companies = Object.values(quote.offers)[0]!;
    expect(companies[0]).toHaveProperty('priceMDL');
  });

  it('pays from the wallet and the balance goes down by the price', async () => {
    const before = await polita.getBalance();
    expect(before).toMatchObject({ currency: 'MDL', wallets: expect.any(Object) });
    expect(before.balance).toBeCloseTo(before.wallets.online + before.wallets.promo, 2);

    const draft = await rcaDraft();
    const paid = await polita.payOrderFromBalance({ id: draft.id });
    expect(paid).toMatchObject({ id: draft.id, status: 'paid' });
    const after = await polita.getBalance();
    expect(after.balance).toBeCloseTo(before.balance - draft.price, 2);
    expect((await polita.waitForOrder(draft.id, { timeoutMs: 20_000, intervalMs: 100 })).status).toBe(
      'completed',
    );
  });

  it('waitForOrder resolves on a failure too (a wallet-paid failure is refunded at once)', async () => {
    const draft = await rcaDraft('100000010');
    await polita.payOrderFromBalance({ id: draft.id });
    const done = await polita.waitForOrder(draft.id, { timeoutMs: 20_000, intervalMs: 100 });
    expect(['failed', 'refunded']).toContain(done.status);
    expect(done.failure_reason).toEqual(expect.any(String));
  });

  it('waitForOrder rejects after its timeout with the last status', async () => {
    const draft = await rcaDraft();
    const started = Date.now();
    const err = await polita.waitForOrder(draft.id, { timeoutMs: 300, intervalMs: 50 }).catch((e) => e);
    expect(err).toBeInstanceOf(WaitForOrderTimeoutError);
    expect(err).toMatchObject({ orderId: draft.id, lastStatus: 'draft', timeoutMs: 300 });
    expect(err.message).toContain(`Order ${draft.id} did not reach a terminal status`);
    expect(Date.now() - started).toBeLessThan(5_000);
  });
});

describe('errors', () => {
  it('a wrong secret is an authentication error (403)', async () => {
    const wrong = new Polita({ baseUrl, partnerId: h.demo.id, secret: 'not-the-secret', maxRetries: 0 });
    const err = await wrong.getBalance().catch((e) => e);
    expect(err).toBeInstanceOf(PolitaAuthenticationError);
    expect(err).toMatchObject({ status: 403, error: 'Forbidden' });
  });

  it('an unknown order is not found (404)', async () => {
    const err = await polita.getOrder({ id: 'IAI000000AAA' }).catch((e) => e);
    expect(err).toBeInstanceOf(PolitaNotFoundError);
    expect(err).toMatchObject({ status: 404, error: 'Order not found', message: 'Order not found' });
  });

  it('a schema failure is a validation error naming the field (400)', async () => {
    const err = await polita
      .createOrder({
        customer: { phone: '+37369123456' },
        products: [rcaItem('tomorrow')],
      })
      .catch((e) => e);
    expect(err).toBeInstanceOf(PolitaValidationError);
    expect(err.status).toBe(400);
    expect(err.message).toContain('start_date');
  });

  it('a product rule is a product-rule error with the [API] reason (500), not retried', async () => {
    const err = await polita
      .createOrder({
        customer: { phone: '+37369123456' },
        products: [rcaItem('2099-01-01', { vehicle: '999999999' })],
      })
      .catch((e) => e);
    expect(err).toBeInstanceOf(PolitaProductRuleError);
    expect(err).toMatchObject({ status: 500, reason: 'Vehicle not found' });
    expect(err.message).toBe('[API] Vehicle not found');
  });

  it('a partner without a wallet gets a wallet error (403), not an authentication error', async () => {
    const creds = await h.newPartner({ wallet: false });
    const client = new Polita({ baseUrl, partnerId: creds.id, secret: creds.secret });
    const err = await client.getBalance().catch((e) => e);
    expect(err).toBeInstanceOf(PolitaWalletUnavailableError);
    expect(err).toMatchObject({ status: 403, error: 'No wallet account linked to this partner' });
  });
});

describe('idempotency', () => {
  it('the same key twice gives the same order', async () => {
    const key = `sdk-test-${Date.now()}`;
    const first = await rcaDraft('100000001', key);
    const second = await rcaDraft('100000001', key);
    expect(second.id).toBe(first.id);
  });

  it('the same key with another body is a conflict (409)', async () => {
    const key = `sdk-test-conflict-${Date.now()}`;
    const draft = await rcaDraft();
    await polita.payOrderFromBalance({ id: draft.id }, { idempotencyKey: key });
    const other = await rcaDraft();
    const err = await polita.payOrderFromBalance({ id: other.id }, { idempotencyKey: key }).catch((e) => e);
    expect(err).toBeInstanceOf(PolitaConflictError);
    expect(err.status).toBe(409);
  });

  it('a lost answer is retried with the same key and replayed: one order, its id answered', async () => {
    // A proxy in front of the service that lets create-order through but loses its first answer.
    const seen: { key: string | undefined; status: number; replayed: unknown; body: string }[] = [];
    const target = new URL(baseUrl);
    const proxy: Server = createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => {
        const upstream = request(
          { host: '127.0.0.1', port: target.port, path: req.url, method: req.method, headers: req.headers },
          (answer) => {
            const parts: Buffer[] = [];
            answer.on('data', (c: Buffer) => parts.push(c));
            answer.on('end', () => {
              const body = Buffer.concat(parts).toString();
              seen.push({
                key: req.headers['idempotency-key'] as string | undefined,
                status: answer.statusCode!,
                replayed: answer.headers['idempotent-replayed'],
                body,
              });
              if (seen.length === 1) {
                res.writeHead(502, { 'content-type': 'text/plain' }).end('Bad Gateway');
              } else {
                res.writeHead(answer.statusCode!, answer.headers).end(body);
              }
            });
          },
        );
        upstream.end(Buffer.concat(chunks));
      });
    });
    await new Promise<void>((r) => proxy.listen(0, '127.0.0.1', r));
    try {
      const { offers } = await polita.getOffers({
        product: 'rca',
        vehicle: '100000001',
        duration: 365,
        idnx: '2003000000016',
      });
      const client = new Polita({
        baseUrl: `http://127.0.0.1:${(proxy.address() as AddressInfo).port}`,
        partnerId: h.demo.id,
        secret: h.demo.secret,
        retryDelayMs: 10,
      });
      const order = await client.createOrder({
        customer: { phone: '+37369123456' },
        products: [rcaItem(offers[0]!.min_start_date!, { insurance_company: offers[0]!.company! })],
      });
      expect(seen).toHaveLength(2);
      expect(seen[0]!.key).toMatch(/^[0-9a-f-]{36}$/);
      expect(seen[1]!.key).toBe(seen[0]!.key);
      expect(seen[0]).toMatchObject({ status: 200, replayed: undefined });
      expect(seen[1]).toMatchObject({ status: 200, replayed: 'true', body: seen[0]!.body });
      expect(order.id).toBe(JSON.parse(seen[0]!.body).id);
      expect(order.status).toBe('draft');
    } finally {
      await new Promise((r) => proxy.close(r));
    }
  });
});

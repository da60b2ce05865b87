import { createHmac } from 'node:crypto';
import { createServer, type IncomingHttpHeaders, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import {
  Polita,
  PolitaConflictError,
  PolitaConnectionError,
  PolitaProductRuleError,
  PolitaRateLimitError,
  PolitaServerError,
  PolitaTimeoutError,
  PolitaValidationError,
} from '../../sdk/src/index.ts';
import { rcaItem } from './support.ts';

/**
 * Retries against a scripted server on 127.0.0.1: each request gets the next answer of the script
 * (the last one repeats), and every request is recorded with its raw body.
 */
type Answer = (res: ServerResponse) => void;
interface Seen {
  url: string;
  headers: IncomingHttpHeaders;
  body: string;
}

const servers: Server[] = [];
afterEach(async () => {
  await Promise.all(servers.splice(0).map((s) => new Promise((r) => s.close(r))));
});

async function scripted(...answers: Answer[]): Promise<{ client: (o?: object) => Polita; seen: Seen[] }> {
  const seen: Seen[] = [];
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      seen.push({ url: req.url!, headers: req.headers, body: Buffer.concat(chunks).toString() });
      answers[Math.min(seen.length, answers.length) - 1]!(res);
    });
  });
  servers.push(server);
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const baseUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return {
    seen,
    client: (o = {}) => new Polita({ baseUrl, partnerId: 'demo', secret: 's3cret', retryDelayMs: 10, ...o }),
  };
}

const json =
  (status: number, body: unknown, headers: Record<string, string> = {}): Answer =>
  (res) =>
    res.writeHead(status, { 'content-type': 'application/json', ...headers }).end(JSON.stringify(body));
const error = (status: number, message: string, headers: Record<string, string> = {}) =>
  json(
    status,
    { statusCode: status, error: status >= 500 ? 'Internal Server Error' : message, message },
    headers,
  );
const ORDER = { id: 'IAI123456ABC', status: 'draft', description: 'RCA', price: 1512, currency: 'MDL' };

describe('signing', () => {
  it('signs by default with the timestamped form: the time, the endpoint and the bytes it sends', async () => {
    const { client, seen } = await scripted(json(200, ORDER));
    await client().getOrder({ id: 'IAI123456ABC' });
    const [req] = seen;
    expect(req!.url).toBe('/v1/get-order');
    expect(req!.headers['x-hmac-signature']).toBeUndefined();
    const m = /^id=demo,t=(\d+),v1=([0-9a-f]{128})$/.exec(String(req!.headers['x-polita-signature']));
    expect(m).not.toBeNull();
    expect(Math.abs(Number(m![1]) - Date.now() / 1000)).toBeLessThan(5);
    expect(m![2]).toBe(
      createHmac('sha512', 's3cret').update(`${m![1]}.POST /v1/get-order.${req!.body}`).digest('hex'),
    );
  });

  it('signs with the spec form, <partner id>:<hex HMAC-SHA512> of the bytes, when asked', async () => {
    const { client, seen } = await scripted(json(200, ORDER));
    await client({ signature: 'spec' }).getOrder({ id: 'IAI123456ABC' });
    const [req] = seen;
    expect(req!.url).toBe('/v1/get-order');
    expect(req!.headers['content-type']).toBe('application/json');
    expect(req!.headers['x-polita-signature']).toBeUndefined();
    expect(req!.headers['x-hmac-signature']).toBe(
      `demo:${createHmac('sha512', 's3cret').update(req!.body).digest('hex')}`,
    );
    expect(JSON.parse(req!.body)).toEqual({ id: 'IAI123456ABC' });
  });

  it('accepts a base URL with a trailing slash or /v1', async () => {
    const { seen } = await scripted(json(200, ORDER));
    const port = servers[0]!.address() as AddressInfo;
    for (const base of [`http://127.0.0.1:${port.port}/`, `http://127.0.0.1:${port.port}/v1`]) {
      await new Polita({ baseUrl: base, partnerId: 'demo', secret: 's3cret' }).getBalance();
    }
    expect(seen.map((s) => s.url)).toEqual(['/v1/get-balance', '/v1/get-balance']);
  });
});

describe('retries', () => {
  it('retries a 503 and answers the 200 that follows', async () => {
    const { client, seen } = await scripted(error(503, 'Service Unavailable'), json(200, ORDER));
    await expect(client().getOrder({ id: ORDER.id })).resolves.toEqual(ORDER);
    expect(seen).toHaveLength(2);
    expect(seen[1]!.body).toBe(seen[0]!.body);
    // Signed again for the retry (a fresh t), over the same bytes.
    expect(seen[1]!.headers['x-polita-signature']).toMatch(/^id=demo,t=\d+,v1=[0-9a-f]{128}$/);
  });

  it('retries a write with the same generated Idempotency-Key and the same bytes', async () => {
    const { client, seen } = await scripted(
      error(500, 'Unexpected error; quote request id r-1'),
      json(200, ORDER),
    );
    await client().createOrder({
      customer: { phone: '+37369123456' },
      products: [rcaItem('2030-01-01')],
    });
    expect(seen).toHaveLength(2);
    expect(seen[0]!.headers['idempotency-key']).toMatch(
      /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[0-9a-f]{4}-[0-9a-f]{12}$/,
    );
    expect(seen[1]!.headers['idempotency-key']).toBe(seen[0]!.headers['idempotency-key']);
    expect(seen[1]!.body).toBe(seen[0]!.body);
  });

  it('sends a given Idempotency-Key as it is, and a new one on each call otherwise', async () => {
    const { client, seen } = await scripted(json(200, ORDER));
    const polita = client();
    await polita.payOrderFromBalance({ id: ORDER.id }, { idempotencyKey: 'my-key-1' });
    await polita.confirmOrder({
      id: ORDER.id,
      payment: { receipt_id: 'R', transaction_id: 'T', paid_at: 1_700_000_000_000, amount: 1512 },
    });
    await polita.confirmOrder({
      id: ORDER.id,
      payment: { receipt_id: 'R', transaction_id: 'T', paid_at: 1_700_000_000_000, amount: 1512 },
    });
    expect(seen[0]!.headers['idempotency-key']).toBe('my-key-1');
    expect(seen[1]!.headers['idempotency-key']).not.toBe(seen[2]!.headers['idempotency-key']);
    await polita.getOrder({ id: ORDER.id });
    expect(seen[3]!.headers['idempotency-key']).toBeUndefined();
  });

  it('gives up after maxRetries with a server error', async () => {
    const { client, seen } = await scripted(error(500, 'Unexpected error; quote request id r-2'));
    const err = await client({ maxRetries: 3 })
      .getBalance()
      .catch((e) => e);
    expect(err).toBeInstanceOf(PolitaServerError);
    expect(err).toMatchObject({
      name: 'PolitaServerError',
      status: 500,
      message: 'Unexpected error; quote request id r-2',
    });
    expect(seen).toHaveLength(4);
  });

  it('does not retry a 500 [API] product rule, nor a 400', async () => {
    const rule = await scripted(error(500, '[API] No Vignette found.'));
    const err = await rule
      .client()
      .getOrder({ id: 'x' })
      .catch((e) => e);
    expect(err).toBeInstanceOf(PolitaProductRuleError);
    expect(err.reason).toBe('No Vignette found.');
    expect(rule.seen).toHaveLength(1);

    const bad = await scripted(error(400, 'Insufficient balance'));
    const err400 = await bad
      .client()
      .payOrderFromBalance({ id: 'x' })
      .catch((e) => e);
    expect(err400).toBeInstanceOf(PolitaValidationError);
    expect(err400).toMatchObject({ error: 'Insufficient balance', message: 'Insufficient balance' });
    expect(bad.seen).toHaveLength(1);
  });

  it('retries a 409 of its own first request still running, not one of another body', async () => {
    const running =
      'A request with this Idempotency-Key is still being processed; retry after it has answered';
    const a = await scripted(error(409, running), json(200, ORDER));
    await expect(a.client().payOrderFromBalance({ id: ORDER.id })).resolves.toEqual(ORDER);
    expect(a.seen).toHaveLength(2);

    const b = await scripted(error(409, 'This Idempotency-Key was used with a different request body'));
    await expect(b.client().payOrderFromBalance({ id: ORDER.id })).rejects.toBeInstanceOf(
      PolitaConflictError,
    );
    expect(b.seen).toHaveLength(1);
  });

  it('waits Retry-After: 0 on a 429 and retries', async () => {
    const { client, seen } = await scripted(
      error(429, 'Rate limit exceeded', { 'retry-after': '0' }),
      json(200, ORDER),
    );
    await expect(client().getOrder({ id: ORDER.id })).resolves.toEqual(ORDER);
    expect(seen).toHaveLength(2);
  });

  it('waits Retry-After: 1 second on a 429 before retrying', async () => {
    const { client, seen } = await scripted(
      error(429, 'Rate limit exceeded', { 'retry-after': '1' }),
      json(200, ORDER),
    );
    const started = Date.now();
    await client().getOrder({ id: ORDER.id });
    expect(Date.now() - started).toBeGreaterThanOrEqual(950);
    expect(seen).toHaveLength(2);
  });

  it('a 429 that outlasts the retries is a rate-limit error with retryAfter', async () => {
    const { client, seen } = await scripted(error(429, 'Rate limit exceeded', { 'retry-after': '0' }));
    const err = await client({ maxRetries: 1 })
      .getOrder({ id: ORDER.id })
      .catch((e) => e);
    expect(err).toBeInstanceOf(PolitaRateLimitError);
    expect(err).toMatchObject({ status: 429, retryAfter: 0 });
    expect(seen).toHaveLength(2);
  });

  it('retries a broken connection', async () => {
    const { client, seen } = await scripted((res) => res.socket!.destroy(), json(200, ORDER));
    await expect(client().getOrder({ id: ORDER.id })).resolves.toEqual(ORDER);
    expect(seen).toHaveLength(2);
  });

  it('a refused connection is a connection error after the retries', async () => {
    await scripted(json(200, ORDER));
    const port = (servers[0]!.address() as AddressInfo).port;
    await new Promise((r) => servers.pop()!.close(r));
    const err = await new Polita({
      baseUrl: `http://127.0.0.1:${port}`,
      partnerId: 'p',
      secret: 's',
      retryDelayMs: 5,
    })
      .getBalance()
      .catch((e) => e);
    expect(err).toBeInstanceOf(PolitaConnectionError);
    expect(err.message).toContain('cannot reach');
  });

  it('an answer that does not come within timeoutMs is a timeout error', async () => {
    const { client, seen } = await scripted(() => {
      /* never answers */
    });
    const err = await client({ timeoutMs: 150, maxRetries: 1 })
      .getOrder({ id: ORDER.id })
      .catch((e) => e);
    expect(err).toBeInstanceOf(PolitaTimeoutError);
    expect(err).toBeInstanceOf(PolitaConnectionError);
    expect(seen).toHaveLength(2);
  });

  it('a proxy error page (not JSON) is still a server error with its text', async () => {
    const { client } = await scripted((res) =>
      res.writeHead(502, { 'content-type': 'text/html' }).end('<h1>Bad Gateway</h1>'),
    );
    const err = await client({ maxRetries: 0 })
      .getBalance()
      .catch((e) => e);
    expect(err).toBeInstanceOf(PolitaServerError);
    expect(err).toMatchObject({ status: 502, error: 'Bad Gateway', message: '<h1>Bad Gateway</h1>' });
  });
});

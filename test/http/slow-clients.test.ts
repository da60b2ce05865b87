import { connect, type Socket } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { RCA_QUOTE, startHarness, type Harness } from '../support/harness.ts';

let h: Harness;
let port = 0;
beforeAll(async () => {
  h = await startHarness({ env: { MAX_CONNECTIONS: '8' } });
  await h.service.app.listen({ port: 0, host: '127.0.0.1' });
  port = (h.service.app.server.address() as { port: number }).port;
});
afterAll(() => h?.close());

/** A raw connection that records when the server closed it. */
function rawClient(): Promise<{ socket: Socket; closed: Promise<number>; received: () => string }> {
  return new Promise((resolve, reject) => {
    let data = '';
    const started = Date.now();
    const socket = connect(port, '127.0.0.1');
    socket.on('data', (d) => (data += d.toString()));
    const closed = new Promise<number>((r) => socket.on('close', () => r(Date.now() - started)));
    socket.on('error', () => {});
    socket.once('connect', () => resolve({ socket, closed, received: () => data }));
    socket.once('error', reject);
  });
}

/** Writes `chunks` one every `everyMs` until the socket closes. */
function dribble(socket: Socket, chunks: string[], everyMs: number) {
  let i = 0;
  const timer = setInterval(() => {
    if (socket.destroyed || i >= chunks.length) return clearInterval(timer);
    socket.write(chunks[i++]!);
  }, everyMs);
  socket.on('close', () => clearInterval(timer));
}

/** Slow clients and their request ids (decision 0003). */
describe('slow clients', () => {
  it('are disconnected when the headers, or the whole request, take over 10 s (decision 0083)', async () => {
    const headers = await rawClient();
    headers.socket.write('POST /v1/get-offers HTTP/1.1\r\nHost: x\r\n');
    dribble(
      headers.socket,
      Array.from({ length: 40 }, (_, i) => `X-Slow-${i}: 1\r\n`),
      2000,
    );

    const body = await rawClient();
    body.socket.write(
      'POST /v1/get-offers HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n' +
        'X-Hmac-Signature: demo:00\r\nContent-Length: 1000\r\n\r\n',
    );
    dribble(
      body.socket,
      Array.from({ length: 500 }, () => ' '),
      2000,
    );

    const headersClosedAfter = await headers.closed;
    expect(headersClosedAfter).toBeGreaterThanOrEqual(9_000);
    expect(headersClosedAfter).toBeLessThan(13_000);
    expect(headers.received()).toMatch(/^HTTP\/1\.1 408/);

    const bodyClosedAfter = await body.closed;
    expect(bodyClosedAfter).toBeGreaterThanOrEqual(9_000);
    expect(bodyClosedAfter).toBeLessThan(13_000);
  }, 30_000);

  it('near MAX_CONNECTIONS, a new connection closes the oldest that sent no whole request', async () => {
    const open = await Promise.all(Array.from({ length: 8 }, () => rawClient()));
    // More than 90 % of 8 were open: the newest made room by closing the oldest, and is answered.
    const res = await fetch(`http://127.0.0.1:${port}/healthz`);
    expect(res.status).toBe(200);
    expect(await open[0]!.closed).toBeLessThan(2_000);
    for (const c of open) c.socket.destroy();
    await Promise.all(open.map((c) => c.closed));
  });

  it('an idle keep-alive connection is closed after 5 s', async () => {
    const c = await rawClient();
    c.socket.write('GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n');
    const after = await c.closed;
    expect(c.received()).toMatch(/^HTTP\/1\.1 200/);
    expect(after).toBeGreaterThanOrEqual(4_500);
    expect(after).toBeLessThan(7_000);
  }, 15_000);
});

describe('request ids', () => {
  const idOf = async (given?: string) => {
    const res = await h.service.app.inject({
      method: 'POST',
      url: '/v1/get-offers',
      headers: {
        'content-type': 'application/json',
        ...(given !== undefined ? { 'x-request-id': given } : {}),
      },
      payload: JSON.stringify(RCA_QUOTE),
    });
    return res.headers['x-request-id'];
  };

  it('echoes a short token of safe characters', async () => {
    expect(await idOf('terminal-42_7.a:b')).toBe('terminal-42_7.a:b');
  });

  it('replaces anything else with an id of its own', async () => {
    const uuid = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;
    for (const given of ['a'.repeat(65), 'two words', '"quoted"', 'x{"level":60}', '', 'ăîș'])
      expect(await idOf(given), given).toMatch(uuid);
    expect(await idOf()).toMatch(uuid);
  });
});

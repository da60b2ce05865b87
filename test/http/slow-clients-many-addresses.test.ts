import { connect, type Socket } from 'node:net';
import { request } from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startHarness, type Harness } from '../support/harness.ts';

/**
 * Third security round, finding 1 (decision 0083), scaled down: MAX_CONNECTIONS 40 and 5 a client
 * address stand for 1024 and 256 (the shares are what matter). Eight loopback addresses each hold
 * every connection they may with a body that never ends, and reopen each one the service closes; a
 * ninth address must still be answered within 2 s.
 */
const PER_ADDRESS = 5;
let h: Harness;
let port = 0;
beforeAll(async () => {
  h = await startHarness({
    workers: false,
    env: { MAX_CONNECTIONS: '40', MAX_CONNECTIONS_PER_IP: String(PER_ADDRESS) },
  });
  await h.service.app.listen({ port: 0, host: '127.0.0.1' });
  port = (h.service.app.server.address() as { port: number }).port;
});
afterAll(() => h?.close());

/** A connection from `from` sending headers and then a byte of its body now and then, for ever. */
function slowBody(from: string, onClose: () => void): Socket {
  const socket = connect({ port, host: '127.0.0.1', localAddress: from });
  socket.on('error', () => {});
  socket.on('connect', () => {
    socket.write(
      'POST /v1/get-balance HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n' +
        'X-Hmac-Signature: demo:00\r\nContent-Length: 60000\r\n\r\n',
    );
    const timer = setInterval(() => (socket.destroyed ? clearInterval(timer) : socket.write(' ')), 500);
    socket.on('close', () => clearInterval(timer));
  });
  socket.on('close', onClose);
  return socket;
}

/** GET /healthz from `from` on a new connection: its status and how long the answer took. */
function ask(from: string): Promise<{ status: number; ms: number }> {
  const started = Date.now();
  return new Promise((resolve) => {
    const req = request(
      { host: '127.0.0.1', port, path: '/healthz', localAddress: from, agent: false, timeout: 5_000 },
      (res) => {
        res.resume();
        res.on('end', () => resolve({ status: res.statusCode ?? 0, ms: Date.now() - started }));
      },
    );
    req.on('timeout', () => req.destroy());
    req.on('error', () => resolve({ status: 0, ms: Date.now() - started }));
    req.end();
  });
}

describe('finding 1: slow clients from many addresses', () => {
  it('eight addresses holding every slow connection they may do not keep a ninth from an answer in 2 s', async () => {
    let attacking = true;
    const held: Socket[] = [];
    const hold = (from: string) => {
      const s = slowBody(from, () => {
        // An attacker opens again at once what the service closed.
        if (attacking) setTimeout(() => hold(from), 20);
      });
      held.push(s);
    };
    for (let a = 2; a <= 9; a++) for (let i = 0; i < PER_ADDRESS; i++) hold(`127.0.0.${a}`);
    await new Promise((r) => setTimeout(r, 1_500));
    try {
      for (let i = 0; i < 5; i++) {
        const answer = await ask('127.0.0.10');
        expect(answer.status, `attempt ${i}`).toBe(200);
        expect(answer.ms, `attempt ${i}`).toBeLessThan(2_000);
        await new Promise((r) => setTimeout(r, 200));
      }
    } finally {
      attacking = false;
      for (const s of held) s.destroy();
    }
  }, 30_000);
});

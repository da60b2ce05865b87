import { Agent, request } from 'node:http';
import { connect, type Socket } from 'node:net';
import Fastify, { type FastifyInstance } from 'fastify';
import { afterEach, describe, expect, it } from 'vitest';
import { installReplyBatching } from '../../src/http/reply-batch.ts';

let app: FastifyInstance;
let port = 0;
const marks: string[] = [];
let handled = 0;

/** A bare app with the batching, listening on loopback: the batching acts on real connections. */
async function start() {
  app = Fastify();
  installReplyBatching(app);
  // Sees each socket's real writes: the batching queues _write/_writev, whose originals call this.
  app.server.on('connection', (socket: Socket & { _writeGeneric: (...a: unknown[]) => unknown }) => {
    const real = socket._writeGeneric;
    socket._writeGeneric = function (...args: unknown[]) {
      marks.push('written');
      return real.apply(this, args);
    };
  });
  app.get('/echo', async (req) => {
    handled++;
    setImmediate(() => marks.push('turn ended'));
    return { n: Number((req.query as { n: string }).n) };
  });
  // Answers only once `gate` requests are waiting, all in one turn: one batch of `gate` replies.
  app.get('/together', async (req, reply) => {
    reply.raw.on('finish', () => marks.push('finished'));
    await together();
    return { n: Number((req.query as { n: string }).n) };
  });
  app.get('/refused', { onRequest: [refuse] }, async () => {
    handled++;
    return { reached: true };
  });
  await app.listen({ port: 0, host: '127.0.0.1' });
  port = (app.server.address() as { port: number }).port;
}

let waiting: (() => void)[] = [];
const gate = 5;
function together(): Promise<void> {
  return new Promise((resolve) => {
    waiting.push(resolve);
    if (waiting.length === gate) {
      for (const r of waiting) r();
      waiting = [];
    }
  });
}

/** An async hook that answers and does not return the reply (Fastify then stops on reply.sent). */
async function refuse(
  _req: unknown,
  reply: { code(c: number): { send(b: unknown): unknown }; sent: boolean },
) {
  reply.code(401).send({ refused: true });
  marks.push(`sent=${reply.sent}`);
}

function get(path: string, agent?: Agent): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const req = request({ host: '127.0.0.1', port, path, agent }, (res) => {
      let body = '';
      res.on('data', (d: Buffer) => (body += d.toString()));
      res.on('end', () => resolve({ status: res.statusCode!, body }));
    });
    req.on('error', reject);
    req.end();
  });
}

/** Raw bytes to the server; resolves with everything it wrote once it closed the connection. */
function raw(text: string): Promise<string> {
  return new Promise((resolve, reject) => {
    let got = '';
    const socket = connect(port, '127.0.0.1', () => socket.write(text));
    socket.on('data', (d) => (got += d.toString()));
    socket.on('close', () => resolve(got));
    socket.on('error', reject);
  });
}

afterEach(async () => {
  await app?.close();
  marks.length = 0;
  handled = 0;
});

describe('reply batching', () => {
  it('writes a reply at the end of the turn it was finished in, not from its handler', async () => {
    await start();
    expect(await get('/echo?n=1')).toEqual({ status: 200, body: '{"n":1}' });
    // The handler's setImmediate was queued before the reply existed, so it runs before the flush.
    expect(marks).toEqual(['turn ended', 'written']);
  });

  it('answers each of many requests on shared keep-alive connections with its own body', async () => {
    await start();
    const agent = new Agent({ keepAlive: true, maxSockets: 8 });
    const replies = await Promise.all(Array.from({ length: 200 }, (_, n) => get(`/echo?n=${n}`, agent)));
    agent.destroy();
    replies.forEach((r, n) => expect(r).toEqual({ status: 200, body: `{"n":${n}}` }));
  });

  it('keeps the order of pipelined answers and writes them all before a requested close', async () => {
    await start();
    const req = (n: number, close = false) =>
      `GET /echo?n=${n} HTTP/1.1\r\nHost: x\r\n${close ? 'Connection: close\r\n' : ''}\r\n`;
    const got = await raw(req(1) + req(2) + req(3, true));
    expect([...got.matchAll(/\{"n":(\d)\}/g)].map((m) => m[1])).toEqual(['1', '2', '3']);
  });

  it('writes every reply of a batch before any of them finishes (finish runs no code between writes)', async () => {
    await start();
    const replies = await Promise.all(
      Array.from({ length: gate }, (_, n) => get(`/together?n=${n}`, new Agent())),
    );
    replies.forEach((r, n) => expect(r).toEqual({ status: 200, body: `{"n":${n}}` }));
    const writes = marks.filter((m) => m === 'written' || m === 'finished');
    expect(writes).toEqual([...Array<string>(gate).fill('written'), ...Array<string>(gate).fill('finished')]);
  });

  it('leaves Fastify its meaning of a sent reply: a hook that answers stops the request', async () => {
    await start();
    expect(await get('/refused')).toEqual({ status: 401, body: '{"refused":true}' });
    expect(marks).toContain('sent=true');
    expect(handled).toBe(0);
  });

  it('still writes the answer to a malformed request, which is written and its socket destroyed in one go', async () => {
    await start();
    const got = await raw('NOT HTTP AT ALL\r\n\r\n');
    expect(got).toMatch(/^HTTP\/1\.1 400 Bad Request\r\n/);
    expect(got).toContain('"statusCode":400');
  });
});

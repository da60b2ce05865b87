import Fastify from 'fastify';
import { describe, expect, it } from 'vitest';
import { installReplyBatching } from '../../src/http/reply-batch.ts';

/** A bare app with the batching hook: what it does to a reply, apart from the service. */
async function app(onEnd: (n: number) => void, beforeHandler = () => {}, batching = true) {
  const a = Fastify();
  if (batching) installReplyBatching(a, (req, reply) => reply.header('x-n', (req.query as { n: string }).n));
  a.addHook('preHandler', (_req, _reply, done) => {
    beforeHandler();
    done();
  });
  a.addHook('onRequest', (req, reply, done) => {
    const end = reply.raw.end.bind(reply.raw) as (...args: unknown[]) => unknown;
    reply.raw.end = ((...args: unknown[]) => {
      onEnd(Number((req.query as { n: string }).n));
      return end(...args);
    }) as typeof reply.raw.end;
    done();
  });
  a.get('/echo', async (req) => ({ n: Number((req.query as { n: string }).n) }));
  a.get('/boom', async () => {
    throw Object.assign(new Error('refused'), { statusCode: 418 });
  });
  a.get('/bad-header', async (_req, reply) => {
    reply.header('x-bad', 'a\nb');
    return { n: 0 };
  });
  a.get('/text', async (_req, reply) => reply.type('text/plain').send('plain'));
  await a.ready();
  return a;
}

describe('reply batching', () => {
  it('writes a reply at the end of the turn it was finished in, not from its handler', async () => {
    const order: string[] = [];
    // Scheduled before the reply exists: it runs before the batch this reply joins.
    const a = await app(
      () => order.push('written'),
      () => setImmediate(() => order.push('turn ended')),
    );
    const res = await a.inject({ method: 'GET', url: '/echo?n=1' });
    expect(res.json()).toEqual({ n: 1 });
    expect(order).toEqual(['turn ended', 'written']);
    await a.close();
  });

  it('gives each of many replies finished together its own payload, status and headers', async () => {
    const written: number[] = [];
    const a = await app((n) => written.push(n));
    const replies = await Promise.all(
      Array.from({ length: 50 }, (_, n) => a.inject({ method: 'GET', url: `/echo?n=${n}` })),
    );
    replies.forEach((r, n) => {
      expect(r.statusCode).toBe(200);
      expect(r.headers['content-type']).toBe('application/json; charset=utf-8');
      expect(r.json()).toEqual({ n });
      expect(r.headers['x-n']).toBe(String(n));
    });
    expect(written.sort((x, y) => x - y)).toEqual(Array.from({ length: 50 }, (_, n) => n));
    const [error, text] = await Promise.all([
      a.inject({ method: 'GET', url: '/boom?n=0' }),
      a.inject({ method: 'GET', url: '/text?n=0' }),
    ]);
    expect(error.statusCode).toBe(418);
    expect(error.json()).toMatchObject({ statusCode: 418, message: 'refused' });
    expect(text.body).toBe('plain');
    // What every answer gets before it leaves (the service's request id), errors included.
    expect([error.headers['x-n'], text.headers['x-n']]).toEqual(['0', '0']);
    await a.close();
  });

  it('answers what Fastify answers without it when writing a reply throws, the batch unharmed', async () => {
    const batched = await app(() => {});
    const plain = await app(() => {}, undefined, false);
    const [bad, ok] = await Promise.all([
      batched.inject({ method: 'GET', url: '/bad-header?n=0' }),
      batched.inject({ method: 'GET', url: '/echo?n=7' }),
    ]);
    const expected = await plain.inject({ method: 'GET', url: '/bad-header?n=0' });
    expect(expected.statusCode).toBe(500);
    expect([bad.statusCode, bad.body]).toEqual([expected.statusCode, expected.body]);
    expect(ok.json()).toEqual({ n: 7 });
    await Promise.all([batched.close(), plain.close()]);
  });
});

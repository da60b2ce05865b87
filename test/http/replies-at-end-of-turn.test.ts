import Fastify from 'fastify';
import { describe, expect, it, vi } from 'vitest';
import { installRepliesAtEndOfTurn } from '../../src/http/replies-at-end-of-turn.ts';

/**
 * Decision 0105: an answer waits for the end of its event-loop turn (one setImmediate a turn), so a
 * turn's answers leave together. A handler's own setImmediate, queued before the answer is sent,
 * runs before the answer is written with the hook, and after it without (the control).
 */
async function orderOfEvents(install: boolean) {
  const app = Fastify();
  if (install) installRepliesAtEndOfTurn(app);
  const order: string[] = [];
  app.addHook('onResponse', async () => void order.push('answer written'));
  app.get('/', async () => {
    setImmediate(() => order.push('end of turn'));
    return { ok: true };
  });
  const res = await app.inject({ method: 'GET', url: '/' });
  await new Promise((r) => setTimeout(r, 10));
  await app.close();
  return { order, status: res.statusCode, body: res.json() };
}

describe('answers written at the end of the turn', () => {
  it('holds an answer until the turn ends, and then sends it whole', async () => {
    expect(await orderOfEvents(true)).toEqual({
      order: ['end of turn', 'answer written'],
      status: 200,
      body: { ok: true },
    });
  });

  it('(control) without it the answer is sent within the turn', async () => {
    expect((await orderOfEvents(false)).order).toEqual(['answer written', 'end of turn']);
  });

  it('sends every answer of a turn, errors and all', async () => {
    const app = Fastify();
    installRepliesAtEndOfTurn(app);
    app.get('/ok/:n', async (req) => ({ n: Number((req.params as { n: string }).n) }));
    app.get('/fail', async () => {
      throw Object.assign(new Error('refused'), { statusCode: 400 });
    });
    const answers = await Promise.all([
      ...[1, 2, 3].map((n) => app.inject({ method: 'GET', url: `/ok/${n}` })),
      app.inject({ method: 'GET', url: '/fail' }),
    ]);
    expect(answers.map((a) => a.statusCode)).toEqual([200, 200, 200, 400]);
    expect(answers.slice(0, 3).map((a) => a.json().n)).toEqual([1, 2, 3]);
    await app.close();
  });

  it('writes the answers finished in one turn with one wait, not one each', async () => {
    const app = Fastify();
    installRepliesAtEndOfTurn(app);
    let release!: () => void;
    const gate = new Promise<void>((r) => (release = r));
    // Four handlers waiting on one promise finish in the same turn of the event loop.
    app.get('/:n', async (req) => {
      await gate;
      return { n: Number((req.params as { n: string }).n) };
    });
    await app.ready();
    const spy = vi.spyOn(globalThis, 'setImmediate');
    try {
      const pending = [1, 2, 3, 4].map((n) => app.inject({ method: 'GET', url: `/${n}` }));
      await new Promise((r) => setTimeout(r, 20));
      spy.mockClear();
      release();
      const answers = await Promise.all(pending);
      expect(answers.map((a) => a.json().n)).toEqual([1, 2, 3, 4]);
      expect(spy.mock.calls.filter(([fn]) => fn.name === 'sendAll')).toHaveLength(1);
    } finally {
      spy.mockRestore();
      await app.close();
    }
  });
});

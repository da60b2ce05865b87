import pino from 'pino';
import { describe, expect, it } from 'vitest';
import { Outbox } from '../../src/jobs/outbox.ts';

/**
 * The outbox's own timing (src/jobs/outbox.ts), apart from any table: a kick dispatches without
 * waiting for the once-a-second poll (not started here), kicks within the gather window make one
 * dispatch, a kick during a dispatch makes one more after it, and a stop dispatches what is left.
 * Its dispatches on the database are tested in test/wallet/outbox.test.ts and
 * test/app/issuance-completion.test.ts.
 */
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** A dispatch that takes whatever is "queued", up to the batch, and records each call. */
function fakeQueue(batch: number, dispatchMs = 0) {
  const q = { queued: 0, calls: [] as number[] };
  const dispatch = async () => {
    const taken = Math.min(q.queued, batch);
    q.queued -= taken;
    q.calls.push(taken);
    if (dispatchMs) await sleep(dispatchMs);
    return taken;
  };
  return { q, dispatch };
}

describe('the outbox', () => {
  it('dispatches on a kick, the rows of kicks within the gather window together', async () => {
    const { q, dispatch } = fakeQueue(500);
    const outbox = new Outbox('test', dispatch, 500, pino({ level: 'silent' }), 300);
    for (let i = 0; i < 5; i++) {
      q.queued++;
      outbox.kick();
      await sleep(2);
    }
    expect(q.calls).toEqual([]); // still gathering
    await sleep(600);
    expect(q.calls).toEqual([5]);
    await outbox.stop();
  });

  it('drains a full batch at once, and dispatches again for a row queued during a dispatch', async () => {
    const { q, dispatch } = fakeQueue(3, 60);
    const outbox = new Outbox('test', dispatch, 3, pino({ level: 'silent' }), 10);
    q.queued = 5;
    outbox.kick();
    await sleep(90); // the second dispatch (2 rows, not a full batch: the drain's last) is under way
    q.queued += 1;
    outbox.kick();
    await sleep(400);
    expect(q.queued).toBe(0);
    expect(q.calls.reduce((a, b) => a + b, 0)).toBe(6);
    await outbox.stop();
  });

  it('dispatches what is queued when it stops, and nothing after', async () => {
    const { q, dispatch } = fakeQueue(500);
    const outbox = new Outbox('test', dispatch, 500, pino({ level: 'silent' }), 1_000);
    q.queued = 2;
    await outbox.stop();
    expect(q.queued).toBe(0);
    q.queued = 1;
    outbox.kick();
    await sleep(50);
    expect(q.queued).toBe(1);
  });

  it('tells its listener once after a drain that created jobs, and not after one that found none', async () => {
    const { q, dispatch } = fakeQueue(2);
    const outbox = new Outbox('test', dispatch, 2, pino({ level: 'silent' }), 5);
    let told = 0;
    outbox.onDispatched(() => told++);
    q.queued = 3; // two dispatches in one drain
    outbox.kick();
    await sleep(60);
    expect(q.calls).toEqual([2, 1]);
    expect(told).toBe(1);
    outbox.kick(); // nothing queued
    await sleep(60);
    expect(told).toBe(1);
    await outbox.stop();
  });
});

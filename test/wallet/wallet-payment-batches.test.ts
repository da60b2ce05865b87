import { describe, expect, it } from 'vitest';
import { BatchesPerKey, type Settled } from '../../src/app/wallet-payment-batches.ts';

describe('BatchesPerKey', () => {
  it('runs the first job of a key alone, then those that waited as one batch, in arrival order, other keys alongside', async () => {
    const log: string[] = [];
    const batches = new BatchesPerKey<string, string>(async (jobs) => {
      const key = jobs[0]!.slice(0, 1);
      log.push(`${key}:${jobs.join(',')}+`);
      await new Promise((r) => setTimeout(r, 5));
      log.push(`${key}:${jobs.join(',')}-`);
      return jobs.map((j) => ({ ok: true, value: j.toUpperCase() }));
    }, 2);
    const answers = await Promise.all([
      batches.submit('a', 'a1'),
      batches.submit('a', 'a2'),
      batches.submit('b', 'b1'),
      batches.submit('a', 'a3'),
      batches.submit('a', 'a4'),
    ]);
    expect(answers).toEqual(['A1', 'A2', 'B1', 'A3', 'A4']);
    // At most two a batch: a2,a3 then a4; one batch of a key at a time.
    expect(log.filter((x) => x.startsWith('a'))).toEqual([
      'a:a1+',
      'a:a1-',
      'a:a2,a3+',
      'a:a2,a3-',
      'a:a4+',
      'a:a4-',
    ]);
    expect(log.indexOf('b:b1+')).toBeLessThan(log.indexOf('a:a1-'));
    // A quiet key starts again at once.
    expect(await batches.submit('a', 'a5')).toBe('A5');
  });

  it('fails only the jobs whose result is a failure, and the whole batch when the run throws', async () => {
    let throwNext = false;
    const batches = new BatchesPerKey<number, number>(async (jobs) => {
      await Promise.resolve();
      if (throwNext) throw new Error('commit failed');
      return jobs.map((n): Settled<number> =>
        n < 0 ? { ok: false, error: new Error(`bad ${n}`) } : { ok: true, value: n },
      );
    });
    const first = batches.submit('k', 1);
    const rest = [batches.submit('k', 2), batches.submit('k', -3), batches.submit('k', 4)];
    expect(await first).toBe(1);
    expect(await Promise.allSettled(rest)).toMatchObject([
      { status: 'fulfilled', value: 2 },
      { status: 'rejected', reason: { message: 'bad -3' } },
      { status: 'fulfilled', value: 4 },
    ]);
    throwNext = true;
    const failed = await Promise.allSettled([batches.submit('k', 5), batches.submit('k', 6)]);
    expect(failed.map((f) => f.status)).toEqual(['rejected', 'rejected']);
    throwNext = false;
    expect(await batches.submit('k', 7)).toBe(7);
  });
});

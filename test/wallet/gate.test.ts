import { describe, expect, it } from 'vitest';
import { KeyedGate } from '../../src/app/wallet-gate.ts';

describe('KeyedGate', () => {
  it('lets one holder per key through at a time, in arrival order, and other keys alongside', async () => {
    const gate = new KeyedGate();
    const log: string[] = [];
    const hold = async (key: string, name: string) => {
      const release = await gate.acquire(key);
      log.push(`${name}+`);
      await new Promise((r) => setTimeout(r, 5));
      log.push(`${name}-`);
      release();
    };
    await Promise.all([hold('a', 'a1'), hold('a', 'a2'), hold('b', 'b1'), hold('a', 'a3')]);
    const a = log.filter((x) => x.startsWith('a'));
    expect(a).toEqual(['a1+', 'a1-', 'a2+', 'a2-', 'a3+', 'a3-']);
    expect(log.indexOf('b1+')).toBeLessThan(log.indexOf('a1-'));
  });
});

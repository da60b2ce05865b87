import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startHarness, type Harness } from '../support/harness.ts';

let h: Harness;
beforeAll(async () => {
  h = await startHarness({ workers: false });
});
afterAll(() => h?.close());

/**
 * The queues do not notify: a transaction that sends NOTIFY commits under a global lock, which
 * halved wallet payments over many partners. Workers poll instead.
 */
describe('job notifications', () => {
  it('are off: the queues poll', async () => {
    for (const name of ['issue-order', 'deliver-webhook'])
      expect((await h.service.boss.getQueue(name))?.notify).toBe(false);
  });
});

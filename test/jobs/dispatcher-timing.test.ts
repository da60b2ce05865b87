import type { Job, PgBoss } from 'pg-boss';
import pino from 'pino';
import { describe, expect, it } from 'vitest';
import { WebhookDispatcher } from '../../src/jobs/webhook-dispatcher.ts';

/**
 * The webhook dispatcher's own timing (src/jobs/webhook-dispatcher.ts), apart from any database: a
 * finished job is completed at once when no completion is under way, and the jobs that finish
 * during one are completed together by the next statement (a group commit, no timer). Its
 * deliveries on the database are tested in test/app/webhook-events.test.ts.
 */
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** The two calls of pg-boss the dispatcher makes: fetch (with group limits ignored) and complete. */
function fakeBoss(ids: string[], completeMs: number) {
  const waiting = [...ids];
  const completions: string[][] = [];
  const boss = {
    async fetch(_queue: string, opts: { batchSize: number }) {
      return waiting.splice(0, opts.batchSize).map((id) => ({ id, data: { eventId: id } }));
    },
    async complete(_queue: string, jobIds: string[]) {
      completions.push([...jobIds]);
      await sleep(completeMs);
    },
    async fail() {},
  };
  return { boss: boss as unknown as PgBoss, completions };
}

describe('the webhook dispatcher', () => {
  it('completes a job at once, and the jobs that finish meanwhile by the next statement', async () => {
    const { boss, completions } = fakeBoss(['a', 'b', 'c'], 80);
    const ends: Record<string, number> = { a: 0, b: 20, c: 30 };
    const run = (job: Job<{ eventId: string }>) => sleep(ends[job.id]!);
    const opts = { maxInFlight: 8, perPartner: 8, pollingIntervalMs: 10_000 };
    const dispatcher = new WebhookDispatcher(boss, 'q', run, pino({ level: 'silent' }), opts);
    dispatcher.start();
    await sleep(10);
    expect(completions).toEqual([['a']]); // no wait for others
    await sleep(250);
    expect(completions).toEqual([['a'], ['b', 'c']]);
    await dispatcher.stop();
  });

  it('refills a freed slot within its short gather, not the polling interval', async () => {
    const { boss, completions } = fakeBoss(['a', 'b', 'c', 'd'], 0);
    const opts = { maxInFlight: 1, perPartner: 1, pollingIntervalMs: 10_000 };
    const dispatcher = new WebhookDispatcher(boss, 'q', () => sleep(5), pino({ level: 'silent' }), opts);
    dispatcher.start();
    await sleep(400);
    expect(completions.flat()).toEqual(['a', 'b', 'c', 'd']);
    await dispatcher.stop();
  });
});

import pg from 'pg';
import { afterAll, describe, expect, inject, it } from 'vitest';
import {
  drill,
  prepareDemo,
  reconcile,
  sleep,
  smallDisk,
  spawnPolita,
  webhookReceiver,
  type SmallDisk,
} from '../../bench/fault-drill.ts';
import { embeddedConnectionString } from '../../src/db/embedded-server.ts';

/**
 * DATA_DIR's disk fills under a payment load (decision 0050): a write that cannot be made is
 * answered as the database being away and leaves nothing half-done; once the space is freed,
 * everything resumes with no repair step, and every acknowledged payment gets its policy document
 * and its webhook. The disk is a tmpfs the test mounts, so it needs root; only the embedded leg of
 * the suite runs it.
 */
const onServer = inject('testDatabases').server === 'DATABASE_URL';
const disk: SmallDisk | string = onServer
  ? 'it runs once, on the embedded leg (no DATABASE_URL)'
  : smallDisk();
if (typeof disk === 'string') console.log(`disk-full test skipped: ${disk}`);

afterAll(() => {
  if (typeof disk !== 'string') disk.unmount();
}, 60_000);

describe.skipIf(typeof disk === 'string')('DATA_DIR’s disk full under a payment load', () => {
  it('refuses the writes it cannot make, then resumes with nothing lost or half-done', async () => {
    const d = disk as SmallDisk;
    const hook = await webhookReceiver();
    const p = await spawnPolita({ DATA_DIR: d.dir });
    try {
      await prepareDemo(p, hook.url);
      const r = await drill(p, hook, async () => {
        d.fill();
        await sleep(6000);
        d.free();
      });
      console.log(`disk full: ${JSON.stringify(r)}`);
      expect(r.unexpected, 'answers other than a success or the temporary 500').toEqual([]);
      expect(r.duringFault['500'] ?? 0, 'some writes met the full disk').toBeGreaterThan(0);
      expect(r.slowestSeconds).toBeLessThan(5);
      expect(r.lost, 'acknowledged payments whose order did not complete').toEqual([]);
      expect(r.webhooksMissing).toEqual([]);
      expect(p.output()).toMatch(/the database refuses writes for lack of room/);
      expect(
        p
          .output()
          .split('\n')
          .filter((l) => l.includes('"stack"')),
      ).toEqual([]);

      // Nothing half-done: every completed order has every item issued with its document, and no
      // order is left between states.
      const db = new pg.Client({ connectionString: embeddedConnectionString(d.dir) });
      await db.connect();
      try {
        const { rows } = await db.query<{ n: number }>(
          `select count(*)::int as n from order_items i join orders o on o.id = i.order_id
           where o.status = 'completed'
             and (i.file_token is null
                  or not exists (select 1 from documents d where d.token = i.file_token and length(d.pdf) > 0))`,
        );
        expect(rows[0]!.n, 'completed orders missing a policy document').toBe(0);
      } finally {
        await db.end();
      }
      const books = await reconcile({ DATA_DIR: d.dir });
      expect(books, books.output).toMatchObject({ code: 0 });
    } finally {
      await p.stop();
      await hook.close();
    }
  }, 180_000);
});

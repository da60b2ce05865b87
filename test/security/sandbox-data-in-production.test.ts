import { existsSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { Writable } from 'node:stream';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config.ts';
import { createLogger } from '../../src/log.ts';
import { startService } from '../../src/service.ts';
import { startHarness, TEST_SECRET_KEY, type Harness } from '../support/harness.ts';

/**
 * Third security round, finding 5 (decision 0086): a `SANDBOX=false` start on data a sandbox made
 * kept the demo partner (an unfunded balance, its secret in clear on disk) and the demo owner working.
 */
let h: Harness;
beforeAll(async () => {
  h = await startHarness({ workers: false });
});
afterAll(async () => h?.close());

async function productionStart() {
  const lines: string[] = [];
  const sink = new Writable({
    write(chunk, _enc, done) {
      lines.push(String(chunk));
      done();
    },
  });
  const config = loadConfig({
    DATABASE_URL: h.databaseUrl,
    DATA_DIR: h.dataDir,
    SECRET_KEY: TEST_SECRET_KEY,
    SANDBOX: 'false',
    ADMIN_TOKEN: 'production-admin-token-of-32-chars!',
    PUBLIC_BASE_URL: 'http://polita.test',
  });
  const service = await startService(config, { logger: createLogger('info', sink), workers: false });
  await service.stop();
  return lines.filter((l) => l.includes('first used as a sandbox'));
}

describe('finding 5: SANDBOX=false on a sandbox DATA_DIR keeps the demo partner and owner working', () => {
  it('disables the demo partner and the demo owner, removes the credentials file, and says so once', async () => {
    const owner = h.service.demo!.owner!;
    const credentials = join(h.dataDir, 'sandbox-credentials.json');
    writeFileSync(credentials, JSON.stringify({ id: 'demo', secret: h.demo.secret }), { mode: 0o600 });
    const other = await h.newPartner();

    const said = await productionStart();
    expect(said).toHaveLength(1);
    expect(said[0]).toContain('the demo partner demo was disabled');
    expect(said[0]).toContain(`the demo owner ${owner.email} was disabled`);
    expect(existsSync(credentials)).toBe(false);
    // A second production start finds nothing to do, and says nothing.
    expect(await productionStart()).toEqual([]);

    // The harness's sandbox service, still on the same database, looks: the demo is disabled.
    const db = h.service.svc.db;
    expect(
      (await db.selectFrom('partners').select('disabled').where('id', '=', 'demo').executeTakeFirst())
        ?.disabled,
    ).toBe(true);
    const user = await db
      .selectFrom('portal_users')
      .select('disabled_at')
      .where('email', '=', owner.email)
      .executeTakeFirst();
    expect(user?.disabled_at).not.toBeNull();
    expect(
      (await db.selectFrom('partners').select('disabled').where('id', '=', other.id).executeTakeFirst())
        ?.disabled,
    ).toBe(false);
  });
});

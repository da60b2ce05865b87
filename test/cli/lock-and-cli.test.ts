import { execFile } from 'node:child_process';
import { mkdtempSync } from 'node:fs';
import { tmpdir, userInfo } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, describe, expect, it } from 'vitest';
import { openDatabase } from '../../src/db/database.ts';
import { removeDataDir } from '../multiprocess/process.ts';

const run = promisify(execFile);
const dirs: string[] = [];
const tempDir = () => {
  const d = mkdtempSync(join(tmpdir(), 'polita-foundation-'));
  dirs.push(d);
  return d;
};
afterAll(async () => {
  for (const d of dirs) await removeDataDir(d);
});

/** `npm run admin -- …` on an embedded database in `dir`; never throws, answers what happened. */
async function admin(dir: string, ...args: string[]) {
  try {
    const r = await run('npm', ['run', '--silent', 'admin', '--', ...args], {
      env: { ...process.env, DATA_DIR: dir, DATABASE_URL: '', LOG_LEVEL: 'warn' },
      timeout: 60_000,
    });
    return { code: 0, stdout: r.stdout, stderr: r.stderr };
  } catch (err) {
    const e = err as { code: number; stdout: string; stderr: string };
    return { code: e.code, stdout: e.stdout, stderr: e.stderr };
  }
}

describe('the embedded database lock', () => {
  it('refuses a second open of one DATA_DIR while the first is open, with the reason', async () => {
    const dir = tempDir();
    const first = await openDatabase({ dataDir: dir });
    try {
      await expect(openDatabase({ dataDir: dir })).rejects.toThrow(
        `DATA_DIR ${dir} is in use by another Polita process (pid ${process.pid})`,
      );
    } finally {
      await first.close();
    }
    const again = await openDatabase({ dataDir: dir });
    await again.close();
  });
});

describe('npm run admin', () => {
  it('runs the operator use cases on the same DATA_DIR, also while the service holds it', async () => {
    const dir = tempDir();
    // No service: the command starts the embedded server for itself and stops it after.
    const created = await admin(dir, 'partners', 'create', '--name', 'CLI Agent', '--no-wallet');
    expect(created.code, created.stderr).toBe(0);
    expect(JSON.parse(created.stdout)).toEqual({
      id: expect.any(String),
      secret: expect.stringMatching(/^[0-9a-f]{64}$/),
      name: 'CLI Agent',
      webhook_url: null,
      webhook_events: ['completed'],
      renewal_notice_days: 30,
      wallet: false,
      // On unless asked otherwise (decision 0084).
      require_timestamped_signature: true,
    });
    const id = JSON.parse(created.stdout).id as string;

    // What the command line wrote is what the service reads; and while this process holds the
    // DATA_DIR, the command line works on its server.
    const database = await openDatabase({ dataDir: dir });
    try {
      const row = await database.db
        .selectFrom('partners')
        .selectAll()
        .where('id', '=', id)
        .executeTakeFirst();
      expect(row).toMatchObject({ name: 'CLI Agent', disabled: false });

      const renamed = await admin(dir, 'partners', 'update', id, '--name', 'CLI Agent 2');
      expect(renamed.code, renamed.stderr).toBe(0);
      // The switch to timestamped request signatures (decision 0045), and a word it does not take.
      const switched = await admin(dir, 'partners', 'update', id, '--require-timestamped-signature', 'false');
      expect(switched.code, switched.stderr).toBe(0);
      expect(JSON.parse(switched.stdout).require_timestamped_signature).toBe(false);
      const wrong = await admin(dir, 'partners', 'update', id, '--require-timestamped-signature', 'yes');
      expect(wrong.code).not.toBe(0);
      expect(wrong.stderr).toContain('--require-timestamped-signature must be true or false');
      const after = await database.db
        .selectFrom('partners')
        .select('name')
        .where('id', '=', id)
        .executeTakeFirst();
      expect(after?.name).toBe('CLI Agent 2');
      // Each change is in the audit log as the command line's, by the shell's user (decision 0099).
      const audited = await database.db
        .selectFrom('audit_log')
        .select(['actor', 'role', 'via', 'action'])
        .where('target', '=', id)
        .orderBy('id')
        .execute();
      const actor = { actor: `cli:${userInfo().username}`, role: 'admin', via: 'cli' };
      expect(audited).toEqual([
        { ...actor, action: 'partner.create' },
        { ...actor, action: 'partner.change' },
        { ...actor, action: 'partner.change' },
      ]);
      // The command left the server to its owner.
      expect((await database.db.selectFrom('partners').select('id').execute()).length).toBeGreaterThan(0);
    } finally {
      await database.close();
    }
  });
});

import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, describe, expect, it } from 'vitest';
import { openDatabase } from '../../src/db/database.ts';

const run = promisify(execFile);
const dirs: string[] = [];
const tempDir = () => {
  const d = mkdtempSync(join(tmpdir(), 'polita-foundation-'));
  dirs.push(d);
  return d;
};
afterAll(() => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
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
  it('runs the operator use cases on the same DATA_DIR, and refuses while the service holds it', async () => {
    const dir = tempDir();
    const created = await admin(dir, 'partners', 'create', '--name', 'CLI Agent', '--no-wallet');
    expect(created.code, created.stderr).toBe(0);
    expect(JSON.parse(created.stdout)).toEqual({
      id: expect.any(String),
      secret: expect.stringMatching(/^[0-9a-f]{64}$/),
      name: 'CLI Agent',
      webhook_url: null,
      wallet: false,
    });

    // What the command line wrote is what the service reads.
    const database = await openDatabase({ dataDir: dir });
    try {
      const row = await database.db
        .selectFrom('partners')
        .selectAll()
        .where('id', '=', JSON.parse(created.stdout).id)
        .executeTakeFirst();
      expect(row).toMatchObject({ name: 'CLI Agent', disabled: false });

      const refused = await admin(dir, 'orders', 'list');
      expect(refused.code).toBe(2);
      expect(refused.stdout).toBe('');
      expect(refused.stderr).toContain(`DATA_DIR ${dir} is in use by another Polita process`);
      expect(refused.stderr).toContain('operator HTTP API');
    } finally {
      await database.close();
    }
  });
});

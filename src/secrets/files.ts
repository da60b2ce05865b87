import * as fs from 'node:fs';
import { dirname } from 'node:path';

/**
 * Small secret files in DATA_DIR (the sandbox's `secret.key` and `admin-token`): created once with
 * O_CREAT|O_EXCL and mode 0600, so two processes starting together cannot both create one (the
 * loser reads the winner's), written with a final newline that marks them complete, and fsynced
 * with their directory before anything is encrypted under them: a key lost to a power cut after
 * the database committed rows encrypted under it would lose every partner secret.
 */
export async function readOrCreateSecretFile(
  path: string,
  make: () => string,
): Promise<{ value: string; created: boolean }> {
  fs.mkdirSync(dirname(path), { recursive: true, mode: 0o700 });
  const value = make();
  let fd: number | undefined;
  try {
    fd = fs.openSync(path, 'wx', 0o600);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
  }
  if (fd !== undefined) {
    try {
      fs.writeSync(fd, `${value}\n`);
      fs.fsyncSync(fd);
    } finally {
      fs.closeSync(fd);
    }
    syncDirectory(dirname(path));
    return { value, created: true };
  }
  return { value: await readSecretFile(path), created: false };
}

/** The value of an existing secret file, waiting up to 2 s for a writer that has just created it. */
export async function readSecretFile(path: string): Promise<string> {
  for (let i = 0; ; i++) {
    const text = fs.readFileSync(path, 'utf8');
    if (text.endsWith('\n') || i >= 100) return text.trim();
    await new Promise((r) => setTimeout(r, 20));
  }
}

/** Undefined when the file does not exist. */
export async function readSecretFileIfAny(path: string): Promise<string | undefined> {
  try {
    fs.statSync(path);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw err;
  }
  return readSecretFile(path);
}

/** Writes `value` over the file at `path` atomically (a 0600 temporary file renamed onto it). */
export function replaceSecretFile(path: string, value: string): void {
  fs.mkdirSync(dirname(path), { recursive: true, mode: 0o700 });
  const tmp = `${path}.${process.pid}.tmp`;
  fs.rmSync(tmp, { force: true });
  const fd = fs.openSync(tmp, 'wx', 0o600);
  try {
    fs.writeSync(fd, `${value}\n`);
    fs.fsyncSync(fd);
  } finally {
    fs.closeSync(fd);
  }
  fs.renameSync(tmp, path);
  syncDirectory(dirname(path));
}

/** True when group or others may read the file (it should be 0600). */
export function readableByOthers(path: string): boolean {
  return (fs.statSync(path).mode & 0o077) !== 0;
}

function syncDirectory(dir: string): void {
  let fd: number | undefined;
  try {
    fd = fs.openSync(dir, 'r');
    fs.fsyncSync(fd);
  } catch {
    // Some platforms cannot fsync a directory; the file itself is synced.
  } finally {
    if (fd !== undefined) fs.closeSync(fd);
  }
}

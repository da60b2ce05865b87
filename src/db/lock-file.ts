import { closeSync, openSync, readFileSync, rmSync, writeSync } from 'node:fs';
import { join } from 'node:path';

/** DATA_DIR is held by another live process: callers (the operator command line) can tell this apart. */
export class DataDirLockedError extends Error {
  override name = 'DataDirLockedError';
}

/**
 * An exclusive lock on DATA_DIR: a lock file created with O_EXCL holding our pid. A file left by a
 * process that no longer runs is taken over; one held by a live process is refused with a clear error.
 */
export function lockDataDir(dir: string): () => void {
  const path = join(dir, 'polita.lock');
  for (let attempt = 0; attempt < 2; attempt++) {
    try {
      const fd = openSync(path, 'wx');
      writeSync(fd, String(process.pid));
      closeSync(fd);
      return () => rmSync(path, { force: true });
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
      const holder = Number.parseInt(readFileSync(path, 'utf8'), 10);
      if (Number.isInteger(holder) && isAlive(holder)) {
        throw new DataDirLockedError(
          `DATA_DIR ${dir} is in use by another Polita process (pid ${holder}). ` +
            'The embedded database allows one process per directory: stop that process, use another DATA_DIR, ' +
            'or point DATABASE_URL at a PostgreSQL server to run several instances.',
          { cause: err },
        );
      }
      rmSync(path, { force: true });
    }
  }
  throw new Error(`could not lock DATA_DIR ${dir}`);
}

function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
}

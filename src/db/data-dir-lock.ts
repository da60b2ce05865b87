import { createHash } from 'node:crypto';
import { realpathSync, rmSync } from 'node:fs';
import { connect, createServer, type Server } from 'node:net';
import { join } from 'node:path';
import { EmbeddedDatabaseError } from './embedded-errors.ts';

/** DATA_DIR is held by another live Polita process; `pid` is that process when it answered. */
export class DataDirInUseError extends EmbeddedDatabaseError {
  override name = 'DataDirInUseError';
  readonly dataDir: string;
  readonly pid: number | undefined;
  constructor(dataDir: string, pid: number | undefined) {
    super(
      `DATA_DIR ${dataDir} is in use by another Polita process${pid ? ` (pid ${pid})` : ''}. ` +
        'One service runs the embedded database of a DATA_DIR: stop that process, use another DATA_DIR, ' +
        'or point DATABASE_URL at a PostgreSQL server to run several instances.',
    );
    this.dataDir = dataDir;
    this.pid = pid;
  }
}

export interface DataDirLock {
  release(): Promise<void>;
}

/**
 * One process per DATA_DIR. The lock is a listening Unix socket: the kernel closes it the instant its
 * process dies, even by SIGKILL, so a killed service never leaves a stale lock behind (a pid file
 * can name a process that is still dying, or a pid since reused). On Linux the socket lives in the
 * abstract namespace, named after the directory's real path; elsewhere it is a file in DATA_DIR.
 * A client that connects is told the holder's pid.
 */
export async function lockDataDir(dataDir: string): Promise<DataDirLock> {
  const real = realpathSync(dataDir);
  const address =
    process.platform === 'linux'
      ? `\0polita-data-dir-${createHash('sha256').update(real).digest('hex').slice(0, 40)}`
      : join(real, '.polita.lock');
  for (let attempt = 0; ; attempt++) {
    const server = createServer((socket) => {
      // An asker that gave up (this process was busy) is gone by the time the answer is written.
      socket.on('error', () => {});
      socket.end(JSON.stringify({ pid: process.pid }));
    });
    try {
      await listen(server, address);
      server.unref();
      return {
        release: () =>
          new Promise<void>((resolve) => {
            server.close(() => resolve());
          }),
      };
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'EADDRINUSE') throw err;
      const holder = await askHolder(address);
      if (holder.alive) throw new DataDirInUseError(dataDir, holder.pid);
      // A socket file whose process died (only outside Linux: abstract sockets vanish with it).
      if (attempt > 2) throw new DataDirInUseError(dataDir, undefined);
      rmSync(address, { force: true });
    }
  }
}

function listen(server: Server, address: string): Promise<void> {
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(address, () => {
      server.off('error', reject);
      resolve();
    });
  });
}

function askHolder(address: string): Promise<{ alive: boolean; pid?: number }> {
  return new Promise((resolve) => {
    let text = '';
    const socket = connect(address);
    socket.setTimeout(2000, () => socket.destroy());
    socket.on('data', (chunk) => (text += chunk.toString()));
    socket.on('error', (err) => resolve({ alive: (err as NodeJS.ErrnoException).code !== 'ECONNREFUSED' }));
    socket.on('close', () => {
      try {
        const pid = (JSON.parse(text) as { pid?: unknown }).pid;
        resolve({ alive: true, ...(typeof pid === 'number' ? { pid } : {}) });
      } catch {
        resolve({ alive: true });
      }
    });
  });
}

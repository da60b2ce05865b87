import { execFileSync } from 'node:child_process';
import { statSync } from 'node:fs';
import { dirname } from 'node:path';
import { EmbeddedDatabaseError } from './embedded-errors.ts';

/** PostgreSQL refuses to run as root: as root, the embedded server runs as this system user. */
export const SERVER_USER = 'polita-pg';

export interface OsUser {
  name: string;
  uid: number;
  gid: number;
}

/** Undefined when this process is not root (the server runs as this process's own user). */
export function serverUser(): OsUser | undefined {
  if (typeof process.getuid !== 'function' || process.getuid() !== 0) return undefined;
  const found = lookup(SERVER_USER);
  if (found) return found;
  try {
    execFileSync(
      'useradd',
      [
        '--system',
        '--user-group',
        '--no-create-home',
        '--home-dir',
        '/nonexistent',
        '--shell',
        '/usr/sbin/nologin',
        SERVER_USER,
      ],
      { stdio: ['ignore', 'ignore', 'pipe'] },
    );
  } catch (err) {
    // Another process may have created it a moment ago (test files start together).
    const raced = lookup(SERVER_USER);
    if (raced) return raced;
    const why = (err as { stderr?: Buffer }).stderr?.toString().trim() || (err as Error).message;
    throw new EmbeddedDatabaseError(
      `Running as root, the embedded PostgreSQL must run as an unprivileged user, and creating the ` +
        `system user ${SERVER_USER} failed: ${why}. Create it yourself (useradd --system --user-group ` +
        `${SERVER_USER}), run the service as a non-root user, or set DATABASE_URL.`,
    );
  }
  const created = lookup(SERVER_USER);
  if (!created) throw new EmbeddedDatabaseError(`useradd reported success but ${SERVER_USER} is not found`);
  return created;
}

function lookup(name: string): OsUser | undefined {
  try {
    const uid = Number(execFileSync('id', ['-u', name], { stdio: ['ignore', 'pipe', 'ignore'] }).toString());
    const gid = Number(execFileSync('id', ['-g', name], { stdio: ['ignore', 'pipe', 'ignore'] }).toString());
    return Number.isInteger(uid) && Number.isInteger(gid) ? { name, uid, gid } : undefined;
  } catch {
    return undefined;
  }
}

/**
 * The server user must be able to pass through every directory above its data (the bits of `x`
 * that apply to it). Root passes anywhere, so a DATA_DIR under /root would start here and fail in
 * the server: say so before anything is written.
 */
export function assertReachable(dir: string, user: OsUser): void {
  for (let d = dir; ; d = dirname(d)) {
    const st = statSync(d);
    const bit = st.uid === user.uid ? 0o100 : st.gid === user.gid ? 0o010 : 0o001;
    if ((st.mode & bit) === 0) {
      throw new EmbeddedDatabaseError(
        `The embedded PostgreSQL runs as the system user ${user.name} (PostgreSQL refuses root), and that ` +
          `user cannot enter ${d} (mode ${(st.mode & 0o777).toString(8)}), on the way to DATA_DIR ${dir}. ` +
          `Use a DATA_DIR outside it (for example /var/lib/polita), or let others pass through it: chmod o+x ${d}.`,
      );
    }
    if (dirname(d) === d) return;
  }
}

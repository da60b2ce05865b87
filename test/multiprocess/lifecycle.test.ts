import { existsSync, mkdtempSync, readFileSync, statSync } from 'node:fs';
import { request } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { embeddedConnectionString, sharedBuffers } from '../../src/db/embedded-server.ts';
import { timestampedSignatureHeader } from '../../src/signature.ts';
import {
  postgresProcessesOn,
  RCA_QUOTE,
  removeDataDir,
  sleep,
  spawnExpectingFailure,
  spawnService,
  type ServiceProcess,
} from './process.ts';

/**
 * Starting and stopping a real process on the embedded database (decision 0017): one process per
 * DATA_DIR, and SIGTERM lets in-flight requests finish before a clean exit.
 */
describe('a service process on an embedded DATA_DIR', () => {
  let dir: string;
  let proc: ServiceProcess;

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'polita-life-'));
    proc = await spawnService({ DATA_DIR: dir });
  }, 60_000);

  afterAll(async () => {
    await proc?.kill();
    await removeDataDir(dir);
  });

  it('runs a durable PostgreSQL reachable only through a private socket, never as root', async () => {
    const banner = /pg_dump "(postgresql:\/\/[^"]+)"/.exec(proc.output())?.[1];
    expect(banner, 'the start banner prints the connection string for pg_dump').toBe(
      embeddedConnectionString(dir),
    );
    const client = new pg.Client({ connectionString: banner });
    await client.connect();
    try {
      const { rows } = await client.query(
        `select current_setting('listen_addresses') as listen, current_setting('fsync') as fsync,
                current_setting('synchronous_commit') as sync, current_setting('unix_socket_directories') as sockets,
                pg_size_bytes(current_setting('shared_buffers'))::int as buffers`,
      );
      expect(rows[0]).toEqual({
        listen: '',
        fsync: 'on',
        sync: 'on',
        sockets: join(dir, 'run'),
        buffers: Number.parseInt(sharedBuffers(), 10) * 1024 ** 2,
      });
    } finally {
      await client.end();
    }
    expect(statSync(join(dir, 'run')).mode & 0o777, 'socket directory').toBe(0o700);
    const [postmaster] = postgresProcessesOn(dir);
    const uid = Number(/^Uid:\s+(\d+)/m.exec(readFileSync(`/proc/${postmaster}/status`, 'utf8'))?.[1]);
    if (process.getuid?.() === 0) expect(uid, 'as root, the server runs as an unprivileged user').not.toBe(0);
    else expect(uid).toBe(process.getuid?.());
  });

  it('sizes its page cache from the memory it may use: an eighth, between 128 MB and 1 GB', () => {
    const GB = 1024 ** 3;
    expect(sharedBuffers(512 * 1024 ** 2)).toBe('128MB');
    expect(sharedBuffers(4 * GB)).toBe('512MB');
    expect(sharedBuffers(24 * GB)).toBe('1024MB');
  });

  it('refuses a second process on the same DATA_DIR with a clear error', async () => {
    const second = await spawnExpectingFailure({ DATA_DIR: dir });
    expect(second.code).not.toBe(0);
    expect(second.output).toContain(
      `DATA_DIR ${dir} is in use by another Polita process (pid ${proc.child.pid})`,
    );
    // The refused process touched nothing: the first one still serves.
    expect((await proc.call('get-offers', RCA_QUOTE)).status).toBe(200);
  }, 60_000);

  it('on SIGTERM finishes the requests in flight, then exits 0 and releases the DATA_DIR', async () => {
    // Requests whose headers the server already read but whose body is still arriving: they are
    // in flight for certain when the signal lands, with no timing guesswork.
    const payload = JSON.stringify(RCA_QUOTE);
    const inFlight = Array.from({ length: 10 }, () => partialRequest(proc, '/v1/get-offers', payload));
    await Promise.all(inFlight.map((r) => r.headersSent));
    await sleep(300);

    proc.child.kill('SIGTERM');
    await sleep(300);
    expect(proc.child.exitCode, 'the process waits for its requests').toBeNull();

    for (const r of inFlight) r.finish();
    const replies = await Promise.all(inFlight.map((r) => r.reply));
    for (const r of replies) {
      expect(r.status).toBe(200);
      expect((JSON.parse(r.body) as { offers: unknown[] }).offers.length).toBeGreaterThan(0);
    }

    const { code, signal } = await proc.exited;
    expect({ code, signal }).toEqual({ code: 0, signal: null });
    expect(existsSync(join(dir, 'pg', 'postmaster.pid')), 'the embedded PostgreSQL stopped').toBe(false);
    expect(postgresProcessesOn(dir)).toEqual([]);
  }, 60_000);
});

/** A signed POST whose body is held back after its first byte until finish() is called. */
function partialRequest(proc: ServiceProcess, path: string, payload: string) {
  let finish!: () => void;
  let headersSent!: () => void;
  const sent = new Promise<void>((r) => (headersSent = r));
  const reply = new Promise<{ status: number; body: string }>((resolve, reject) => {
    const req = request(
      `${proc.url}${path}`,
      {
        method: 'POST',
        headers: {
          'content-type': 'application/json',
          'content-length': Buffer.byteLength(payload),
          'x-polita-signature': timestampedSignatureHeader(
            proc.demo.id,
            proc.demo.secret,
            path.slice('/v1/'.length),
            payload,
          ),
        },
      },
      (res) => {
        let body = '';
        res.on('data', (d: Buffer) => (body += d.toString()));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, body }));
      },
    );
    req.on('error', reject);
    req.write(payload.slice(0, 1), () => headersSent());
    finish = () => req.end(payload.slice(1));
  });
  return { reply, headersSent: sent, finish: () => finish() };
}

import { execFile } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Writable } from 'node:stream';
import { promisify } from 'node:util';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config.ts';
import { createLogger } from '../../src/log.ts';
import { keyId, tokenHash } from '../../src/secrets/secret-box.ts';
import { startService, type Service } from '../../src/service.ts';
import { timestampedSignatureHeader } from '../../src/signature.ts';
import { testDatabaseUrl } from '../support/database.ts';
import { startHarness, TEST_SECRET_KEY, type Harness } from '../support/harness.ts';
import { removeDataDir, spawnExpectingFailure, spawnService } from '../multiprocess/process.ts';

/**
 * Secrets at rest (decision 0021), on the real database: partner secrets encrypted
 * under SECRET_KEY, rows from before converted at start, key rotation, the sandbox admin token
 * stored only as a hash, and logs that carry no credential.
 */
const K1 = '11'.repeat(32);
const K2 = '22'.repeat(32);
const K3 = '33'.repeat(32);
const id = (hex: string) => keyId(Buffer.from(hex, 'hex'));

const cleanups: (() => Promise<void> | void)[] = [];
afterAll(async () => {
  for (const c of cleanups.reverse()) await c();
});
const tempDir = () => {
  const d = mkdtempSync(join(tmpdir(), 'polita-secrets-'));
  cleanups.push(() => rmSync(d, { recursive: true, force: true }));
  return d;
};
async function freshDatabase(): Promise<string> {
  const db = await testDatabaseUrl();
  cleanups.push(() => db.drop());
  return db.url;
}
async function query<T extends pg.QueryResultRow = Record<string, unknown>>(
  url: string,
  text: string,
  values: unknown[] = [],
): Promise<T[]> {
  const c = new pg.Client({ connectionString: url });
  await c.connect();
  try {
    return (await c.query<T>(text, values)).rows;
  } finally {
    await c.end();
  }
}

/** The service on `url` with DATA_DIR `dataDir`, as main.ts starts it (no job workers: nothing here issues). */
function start(url: string, dataDir: string, env: Record<string, string> = {}): Promise<Service> {
  const config = loadConfig({
    DATABASE_URL: url,
    DATA_DIR: dataDir,
    SANDBOX: 'true',
    PUBLIC_BASE_URL: 'http://polita.test',
    LOG_LEVEL: 'silent',
    ...env,
  });
  return startService(config, { logger: createLogger('silent'), workers: false });
}

/** A signed get-order of an order nobody has: 404 once authenticated, 403 when the signature is refused. */
async function signed(service: Service, creds: { id: string; secret: string }) {
  const payload = JSON.stringify({ id: 'IAI123456ABC' });
  const res = await service.app.inject({
    method: 'POST',
    url: '/v1/get-order',
    headers: {
      'content-type': 'application/json',
      'x-polita-signature': timestampedSignatureHeader(creds.id, creds.secret, 'get-order', payload),
    },
    payload,
  });
  return res.statusCode;
}

async function createPartner(service: Service): Promise<{ id: string; secret: string }> {
  const res = await service.app.inject({
    method: 'POST',
    url: '/admin/partners',
    headers: { authorization: `Bearer ${service.adminToken}`, 'content-type': 'application/json' },
    payload: JSON.stringify({ name: 'Encrypted Agent' }),
  });
  expect(res.statusCode).toBe(201);
  return res.json();
}

/** Every place in every table (all schemas, pg-boss's too) whose text form contains `needle`. */
async function whereStored(url: string, needle: string): Promise<string[]> {
  const columns = await query<{ s: string; t: string; c: string; type: string }>(
    url,
    `select c.table_schema as s, c.table_name as t, c.column_name as c, c.data_type as type
       from information_schema.columns c
       join information_schema.tables t using (table_schema, table_name)
      where t.table_type = 'BASE TABLE' and c.table_schema not in ('pg_catalog', 'information_schema')`,
  );
  expect(columns.length).toBeGreaterThan(30);
  const q = (x: string) => `"${x.replace(/"/g, '""')}"`;
  const hits: string[] = [];
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    for (const col of columns) {
      const where =
        col.type === 'bytea'
          ? `position(convert_to($1, 'UTF8') in ${q(col.c)}) > 0`
          : `strpos(${q(col.c)}::text, $1) > 0`;
      const { rows } = await client.query(
        `select count(*)::int as n from ${q(col.s)}.${q(col.t)} where ${where}`,
        [needle],
      );
      if (rows[0].n > 0) hits.push(`${col.s}.${col.t}.${col.c}`);
    }
  } finally {
    await client.end();
  }
  return hits;
}

describe('partner secrets and the admin token in the database', () => {
  let h: Harness;
  beforeAll(async () => {
    h = await startHarness({ workers: false });
    cleanups.push(() => h.close());
  });

  it('holds no secret in clear anywhere, yet signed requests with them work', async () => {
    const partner = await h.newPartner({ name: 'Secret Keeper' });
    const rotated = await h.admin<{ secret: string }>('POST', `/admin/partners/${partner.id}/secrets`);
    expect(rotated.status).toBe(201);
    const url = h.service.database.connectionString;

    expect((await h.call('get-balance', {}, partner)).status).toBe(200);
    expect((await h.call('get-balance', {}, { id: partner.id, secret: rotated.body.secret })).status).toBe(
      200,
    );
    expect((await h.call('get-balance', {})).status).toBe(200);
    expect((await h.call('get-balance', {}, { id: partner.id, secret: 'f'.repeat(64) })).status).toBe(403);

    for (const secret of [partner.secret, rotated.body.secret, h.demo.secret, h.adminToken]) {
      expect(await whereStored(url, secret), 'a secret is stored in clear').toEqual([]);
    }
    const rows = await query<{ partner_id: string; secret: string | null; secret_enc: string }>(
      url,
      'select partner_id, secret, secret_enc from partner_secrets order by id',
    );
    expect(rows).toHaveLength(3);
    for (const row of rows) {
      expect(row.secret).toBeNull();
      expect(row.secret_enc).toMatch(new RegExp(`^v1:${id(TEST_SECRET_KEY)}:[\\w-]{16}:[\\w-]{22}:[\\w-]+$`));
    }
    // The sandbox admin token: only its SHA-256 in the database, nothing under the old clear key.
    const settings = await query<{ key: string; value: unknown }>(url, 'select key, value from settings');
    expect(settings.find((s) => s.key === 'admin_token')).toBeUndefined();
    expect(settings.find((s) => s.key === 'admin_token_sha256')?.value).toBe(tokenHash(h.adminToken));
  });

  it('a request error is logged without the Authorization header, the signature or any secret', async () => {
    const lines: string[] = [];
    const sink = new Writable({
      write(chunk, _enc, done) {
        lines.push(String(chunk));
        done();
      },
    });
    const logged = await startHarness({ workers: false, logger: createLogger('debug', sink) });
    cleanups.push(() => logged.close());
    const url = logged.service.database.connectionString;
    const body = JSON.stringify({ id: 'IAI123456ABC' });
    const signature = timestampedSignatureHeader(logged.demo.id, logged.demo.secret, 'get-order', body);
    // A real failure of the database under a request: its table is gone for a moment.
    let partnerId: unknown;
    await query(url, 'alter table orders rename to orders_away');
    try {
      const partnerCall = await logged.service.app.inject({
        method: 'POST',
        url: '/v1/get-order',
        headers: { 'content-type': 'application/json', 'x-polita-signature': signature },
        payload: body,
      });
      expect(partnerCall.statusCode).toBe(500);
      partnerId = partnerCall.headers['x-request-id'];
      const adminCall = await logged.service.app.inject({
        method: 'GET',
        url: '/admin/orders',
        headers: { authorization: `Bearer ${logged.adminToken}` },
      });
      expect(adminCall.statusCode).toBe(500);
    } finally {
      await query(url, 'alter table orders_away rename to orders');
    }
    // The service's own logger, handed a request's headers and a partner, censors them (Fastify's
    // serializer of `req` keeps no headers at all).
    const headers = { authorization: `Bearer ${logged.adminToken}`, 'x-hmac-signature': signature };
    logged.service.app.log.error(
      {
        req: { headers },
        request: { headers },
        partner: await logged.service.svc.partners.get('demo'),
      },
      'what a careless log line would carry',
    );
    const errors = lines.filter((l) => JSON.parse(l).level >= 50);
    expect(errors.length).toBeGreaterThanOrEqual(3);
    const failures = errors.filter((l) => l.includes('"unexpected failure"'));
    expect(failures).toHaveLength(2);
    // Each carries the id of its request (req.log is made only when a request logs: request-log.ts).
    expect(JSON.parse(failures[0]!)).toMatchObject({ reqId: partnerId, msg: 'unexpected failure' });
    expect(errors.join('')).toContain('orders');
    const signatureHex = signature.split(':')[1]!;
    for (const line of lines) {
      expect(line).not.toContain(logged.adminToken);
      expect(line).not.toContain(signatureHex);
      expect(line).not.toContain(logged.demo.secret);
    }
    expect(JSON.parse(errors.at(-1)!)).toMatchObject({
      req: {},
      request: { headers: { authorization: '[Redacted]', 'x-hmac-signature': '[Redacted]' } },
      partner: { id: 'demo', secrets: '[Redacted]' },
    });
  });
});

describe('at start', () => {
  it('encrypts the rows an earlier version stored in clear, and they keep working', async () => {
    const url = await freshDatabase();
    const dir = tempDir();
    let service = await start(url, dir, { SECRET_KEY: K1 });
    await service.stop();
    // What a version before migration 5 wrote: a partner whose secret is in clear.
    const clear = 'c1ea7'.padEnd(64, '0');
    await query(
      url,
      `insert into partners (id, name, created_at, updated_at) values ('legacy', 'Legacy', now(), now())`,
    );
    await query(
      url,
      `insert into partner_secrets (partner_id, secret, created_at) values ('legacy', $1, now())`,
      [clear],
    );
    expect(await whereStored(url, clear)).toEqual(['public.partner_secrets.secret']);

    service = await start(url, dir, { SECRET_KEY: K1 });
    try {
      expect(await whereStored(url, clear)).toEqual([]);
      const [row] = await query<{ secret: string | null; secret_enc: string }>(
        url,
        `select secret, secret_enc from partner_secrets where partner_id = 'legacy'`,
      );
      expect(row!.secret).toBeNull();
      expect(row!.secret_enc.startsWith(`v1:${id(K1)}:`)).toBe(true);
      expect(await signed(service, { id: 'legacy', secret: clear })).toBe(404);
      expect(await signed(service, { id: 'legacy', secret: 'f'.repeat(64) })).toBe(403);
    } finally {
      await service.stop();
    }
    // Idempotent: the next start converts nothing and changes nothing.
    const before = await query(url, 'select id, secret_enc from partner_secrets order by id');
    service = await start(url, dir, { SECRET_KEY: K1 });
    await service.stop();
    expect(await query(url, 'select id, secret_enc from partner_secrets order by id')).toEqual(before);
  });

  it('two instances starting together on one database convert each row once and agree', async () => {
    const url = await freshDatabase(); // migrated, as an earlier version left it
    const dir = tempDir();
    for (const n of [1, 2, 3]) {
      await query(
        url,
        `insert into partners (id, name, created_at, updated_at) values ($1, 'L', now(), now())`,
        [`legacy${n}`],
      );
      await query(
        url,
        `insert into partner_secrets (partner_id, secret, created_at) values ($1, $2, now())`,
        [`legacy${n}`, `${n}`.repeat(64)],
      );
    }
    // Same DATA_DIR and database, no SECRET_KEY: they also race for secret.key, admin-token and
    // the demo partner.
    const both = await Promise.all([start(url, dir), start(url, dir)]);
    try {
      expect(both[0].adminToken).toBe(both[1].adminToken);
      const generated = ' (generated now)';
      expect(both.filter((s) => s.secretKey.includes(generated))).toHaveLength(1);
      expect(both[0].secretKey.replace(generated, '')).toBe(both[1].secretKey.replace(generated, ''));
      for (const s of both) {
        for (const n of [1, 2, 3]) {
          expect(await signed(s, { id: `legacy${n}`, secret: `${n}`.repeat(64) })).toBe(404);
        }
      }
      expect(
        await query(url, 'select count(*)::int as n from partner_secrets where secret is not null'),
      ).toEqual([{ n: 0 }]);
    } finally {
      await Promise.all(both.map((s) => s.stop()));
    }
  });

  it('a key rotation: SECRET_KEY_PREVIOUS reads the old rows, re-encrypt moves them, a wrong key stops the start', async () => {
    const url = await freshDatabase();
    const dir = tempDir();
    let service = await start(url, dir, { SECRET_KEY: K1 });
    const partner = await createPartner(service);
    const demo = service.demo!;
    await service.stop();

    // A wrong key is a clear start-up error, not every partner answered 403.
    await expect(start(url, dir, { SECRET_KEY: K3 })).rejects.toThrow(
      `the database holds partner secrets encrypted with another key (2 under key ${id(K1)}), and this process has SECRET_KEY ${id(K3)} (no SECRET_KEY_PREVIOUS)`,
    );

    // Step 1: the new key, the old one beside it.
    service = await start(url, dir, { SECRET_KEY: K2, SECRET_KEY_PREVIOUS: K1 });
    let added: { id: string; secret: string };
    try {
      expect(service.secretKey).toContain(`key ${id(K2)}, SECRET_KEY_PREVIOUS ${id(K1)} also read`);
      expect(await signed(service, partner)).toBe(404);
      expect(await signed(service, demo)).toBe(404);
      added = await createPartner(service);
      const keys = await query<{ k: string }>(
        url,
        `select split_part(secret_enc, ':', 2) as k from partner_secrets order by id`,
      );
      expect(keys.map((r) => r.k)).toEqual([id(K1), id(K1), id(K2)]);

      // Step 2, while it runs: `npm run admin -- secrets re-encrypt`, in one transaction.
      const env = { SECRET_KEY: K2, SECRET_KEY_PREVIOUS: K1, DATABASE_URL: url, DATA_DIR: dir };
      expect(await reencrypt(env)).toEqual({ reencrypted: 2, rows: 3, key_id: id(K2) });
      expect(await reencrypt(env)).toEqual({ reencrypted: 0, rows: 3, key_id: id(K2) });
      expect(await signed(service, partner)).toBe(404);
    } finally {
      await service.stop();
    }

    // Step 3: SECRET_KEY_PREVIOUS dropped; everything still works, and the old key alone no longer does.
    service = await start(url, dir, { SECRET_KEY: K2 });
    try {
      for (const creds of [partner, demo, added]) expect(await signed(service, creds)).toBe(404);
    } finally {
      await service.stop();
    }
    await expect(start(url, dir, { SECRET_KEY: K1 })).rejects.toThrow(`3 under key ${id(K2)}`);
  });
});

describe('npm start', () => {
  it('says where the key came from, and a wrong key stops it with the reason and exit code 1', async () => {
    const url = await freshDatabase();
    const dir = tempDir();
    const proc = await spawnService({ DATABASE_URL: url, DATA_DIR: dir });
    cleanups.push(() => proc.kill());
    const keyFile = join(dir, 'secret.key');
    const generated = readFileSync(keyFile, 'utf8').trim();
    expect(proc.output()).toContain(
      `  Secret key:    ${keyFile} (generated now) (key ${id(generated)}); back it up with the database`,
    );
    expect((await proc.call('get-balance', {})).status).toBe(200);
    await proc.kill();

    const wrong = await spawnExpectingFailure({ DATABASE_URL: url, DATA_DIR: dir, SECRET_KEY: K3 });
    expect(wrong.code).toBe(1);
    expect(wrong.output).toContain(
      `Cannot start: the database holds partner secrets encrypted with another key (1 under key ${id(generated)}), ` +
        `and this process has SECRET_KEY ${id(K3)} (no SECRET_KEY_PREVIOUS) from SECRET_KEY.`,
    );
  });
});

describe('the sandbox admin token', () => {
  it('is printed the same at every start, kept in DATA_DIR/admin-token, and only its hash is stored', async () => {
    const url = await freshDatabase();
    const dir = tempDir();
    const first = await start(url, dir, { SECRET_KEY: K1 });
    const token = first.adminToken;
    await first.stop();
    expect(token).toMatch(/^[0-9a-f]{48}$/);
    const file = join(dir, 'admin-token');
    expect(readFileSync(file, 'utf8')).toBe(`${token}\n`);
    expect(statSync(file).mode & 0o777).toBe(0o600);
    expect(await whereStored(url, token)).toEqual([]);
    expect(await query(url, `select value from settings where key = 'admin_token_sha256'`)).toEqual([
      { value: tokenHash(token) },
    ]);

    const again = await start(url, dir, { SECRET_KEY: K1 });
    try {
      expect(again.adminToken).toBe(token);
      const res = await again.app.inject({
        method: 'GET',
        url: '/admin/partners/demo',
        headers: { authorization: `Bearer ${token}` },
      });
      expect(res.statusCode).toBe(200);
      const wrong = await again.app.inject({
        method: 'GET',
        url: '/admin/partners/demo',
        headers: { authorization: `Bearer ${tokenHash(token)}` },
      });
      expect(wrong.statusCode).toBe(403);
    } finally {
      await again.stop();
    }

    // ADMIN_TOKEN is never stored, not even hashed, and leaves the sandbox token as it was.
    const configured = 'configured-admin-token-0123456789';
    const withEnv = await start(url, dir, { SECRET_KEY: K1, ADMIN_TOKEN: configured });
    await withEnv.stop();
    expect(withEnv.adminToken).toBe(configured);
    expect(await whereStored(url, configured)).toEqual([]);
    expect(await whereStored(url, tokenHash(configured))).toEqual([]);
    expect(readFileSync(file, 'utf8')).toBe(`${token}\n`);

    // Another DATA_DIR on the same (external) database cannot know the token: it says so.
    await expect(start(url, tempDir(), { SECRET_KEY: K1 })).rejects.toThrow(
      'the database holds the admin token of another instance (its DATA_DIR/admin-token)',
    );
  });

  it('on the embedded database of its DATA_DIR, a removed admin-token file gives a new token', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'polita-secrets-embedded-'));
    cleanups.push(() => removeDataDir(dir));
    const config = loadConfig({ DATA_DIR: dir, SANDBOX: 'true', LOG_LEVEL: 'silent' });
    const first = await startService(config, { logger: createLogger('silent'), workers: false });
    await first.stop();
    expect(first.secretKey).toContain(`${join(dir, 'secret.key')} (generated now)`);
    rmSync(join(dir, 'admin-token'));
    const second = await startService(config, { logger: createLogger('silent'), workers: false });
    try {
      expect(second.adminToken).toMatch(/^[0-9a-f]{48}$/);
      expect(second.adminToken).not.toBe(first.adminToken);
      expect(readFileSync(join(dir, 'admin-token'), 'utf8')).toBe(`${second.adminToken}\n`);
      expect(second.secretKey).not.toContain('generated now');
      expect(await signed(second, first.demo!)).toBe(404);
      const url = second.database.connectionString;
      expect(await query(url, `select value from settings where key = 'admin_token_sha256'`)).toEqual([
        { value: tokenHash(second.adminToken) },
      ]);
    } finally {
      await second.stop();
    }
  });

  it('a token an earlier version stored in clear moves to the file and becomes a hash', async () => {
    const url = await freshDatabase();
    const legacy = 'ab12'.repeat(12);
    await query(url, `insert into settings (key, value, updated_at) values ('admin_token', $1, now())`, [
      JSON.stringify(legacy),
    ]);
    const dir = tempDir();
    const service = await start(url, dir, { SECRET_KEY: K1 });
    await service.stop();
    expect(service.adminToken).toBe(legacy);
    expect(readFileSync(join(dir, 'admin-token'), 'utf8')).toBe(`${legacy}\n`);
    expect(await whereStored(url, legacy)).toEqual([]);
    expect(await query(url, `select key, value from settings where key like 'admin_token%'`)).toEqual([
      { key: 'admin_token_sha256', value: tokenHash(legacy) },
    ]);
  });
});

const run = promisify(execFile);
async function reencrypt(env: Record<string, string>): Promise<unknown> {
  const r = await run('npm', ['run', '--silent', 'admin', '--', 'secrets', 're-encrypt'], {
    env: { ...process.env, ...env, LOG_LEVEL: 'warn' },
    timeout: 60_000,
  });
  return JSON.parse(r.stdout);
}

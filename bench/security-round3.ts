/**
 * `npm run bench:security -- [admin url]`: the third security round's findings 1 to 3, measured from
 * outside over HTTP on loopback, so the same script measures any commit (decisions 0083 to 0085).
 * Starts the service in this process on a database of its own, created on the PostgreSQL server of
 * the admin URL (default postgres://postgres@127.0.0.1:5432/postgres) and dropped at the end.
 *
 * 1. Slow clients: MAX_CONNECTIONS 40 and 5 an address by default (BENCH_MAX_CONNECTIONS and
 *    BENCH_PER_ADDRESS give the defaults' 1024 and 256, the attack's own scale); eight loopback
 *    addresses hold every slow-body connection they may and reopen each one closed; a ninth address
 *    asks /healthz five times: status and time of each answer.
 * 2. Password work: 32 POSTs of made-up invitation tokens at once, each from its own address; meanwhile
 *    the time of a DNS lookup of localhost (libuv's threads) and of a real sign-in.
 * 3. Sign-in race: 40 wrong passwords for one email from one address at once, then at once the right
 *    one
 *    (through inject: one address may open only five connections here).
 */
import { randomBytes } from 'node:crypto';
import { lookup } from 'node:dns/promises';
import { mkdtempSync, rmSync } from 'node:fs';
import { request } from 'node:http';
import { connect } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { loadConfig } from '../src/config.ts';
import { createLogger } from '../src/log.ts';
import { startService } from '../src/service.ts';

const maxConnections = Number(process.env.BENCH_MAX_CONNECTIONS ?? 40);
const perAddress = Number(process.env.BENCH_PER_ADDRESS ?? 5);
const adminUrl = process.argv[2] ?? 'postgres://postgres@127.0.0.1:5432/postgres';
const name = `polita_bench_${randomBytes(5).toString('hex')}`;
const dataDir = mkdtempSync(join(tmpdir(), 'polita-bench-sec-'));
const admin = new pg.Client({ connectionString: adminUrl });
await admin.connect();
await admin.query(`create database ${name}`);
const url = new URL(adminUrl);
url.pathname = `/${name}`;
const service = await startService(
  loadConfig({
    DATABASE_URL: url.toString(),
    DATA_DIR: dataDir,
    SECRET_KEY: 'b'.repeat(64),
    LOG_LEVEL: 'silent',
    MAX_CONNECTIONS: String(maxConnections),
    MAX_CONNECTIONS_PER_IP: String(perAddress),
  }),
  { logger: createLogger('silent'), workers: false },
);
await service.app.listen({ port: 0, host: '127.0.0.1' });
const port = (service.app.server.address() as { port: number }).port;

function http(
  path: string,
  opts: { method?: string; from?: string; body?: string; headers?: Record<string, string> } = {},
): Promise<{ status: number; ms: number; body: string }> {
  const started = performance.now();
  return new Promise((resolve) => {
    const req = request(
      {
        host: '127.0.0.1',
        port,
        path,
        method: opts.method ?? 'GET',
        localAddress: opts.from ?? '127.0.0.1',
        agent: false,
        timeout: 30_000,
        headers: opts.headers,
      },
      (res) => {
        let body = '';
        res.on('data', (d) => (body += d));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, ms: performance.now() - started, body }));
      },
    );
    req.on('timeout', () => req.destroy());
    req.on('error', () => resolve({ status: 0, ms: performance.now() - started, body: '' }));
    req.end(opts.body);
  });
}
const form = (fields: Record<string, string>) => ({
  body: new URLSearchParams(fields).toString(),
  headers: { 'content-type': 'application/x-www-form-urlencoded' },
});
const round = (ms: number) => Math.round(ms);

// 1. Slow clients from many addresses.
let attacking = true;
const held = new Set<import('node:net').Socket>();
const hold = (from: string) => {
  const s = connect({ port, host: '127.0.0.1', localAddress: from });
  held.add(s);
  s.on('error', () => {});
  s.on('connect', () => {
    s.write(
      'POST /v1/get-balance HTTP/1.1\r\nHost: x\r\nX-Hmac-Signature: demo:00\r\nContent-Length: 60000\r\n\r\n',
    );
    const t = setInterval(() => (s.destroyed ? clearInterval(t) : s.write(' ')), 500);
  });
  s.on('close', () => {
    held.delete(s);
    if (attacking) setTimeout(() => hold(from), 20);
  });
};
for (let a = 2; a <= 9; a++) for (let i = 0; i < perAddress; i++) hold(`127.0.0.${a}`);
await new Promise((r) => setTimeout(r, 1500));
const ninth = [];
for (let i = 0; i < 5; i++) {
  const r = await http('/healthz', { from: '127.0.0.10' });
  ninth.push(`${r.status || 'refused'} in ${round(r.ms)} ms`);
}
attacking = false;
for (const s of held) s.destroy();
console.log(`1. ninth client under 8 × ${perAddress} slow connections: ${ninth.join(', ')}`);
await new Promise((r) => setTimeout(r, 500));

// A portal user to sign in as.
const invited = await service.app.inject({
  method: 'POST',
  url: '/admin/partners/demo/users',
  headers: { authorization: `Bearer ${service.adminToken}`, 'content-type': 'application/json' },
  payload: JSON.stringify({ email: 'bench@demo.example', role: 'owner' }),
});
const PASSWORD = 'correct horse battery staple 42';
await http(new URL(invited.json().invitation_url).pathname, {
  method: 'POST',
  ...form({ password: PASSWORD }),
});

// 2. Made-up invitation tokens against DNS and a real sign-in.
const quiet = await lookup('localhost').then(() => undefined);
void quiet;
const t0 = performance.now();
await lookup('localhost');
const dnsQuiet = performance.now() - t0;
const signQuiet = await http('/portal/sign-in', {
  method: 'POST',
  from: '127.0.0.60',
  ...form({ email: 'bench@demo.example', password: PASSWORD }),
});
const storm = Array.from({ length: 32 }, (_, i) =>
  http(`/portal/invitations/${randomBytes(32).toString('base64url')}`, {
    method: 'POST',
    from: `127.0.1.${i + 1}`,
    ...form({ password: 'correct horse battery staple 42' }),
  }),
);
await new Promise((r) => setTimeout(r, 20));
const t1 = performance.now();
await lookup('localhost');
const dnsStorm = performance.now() - t1;
const signStorm = await http('/portal/sign-in', {
  method: 'POST',
  from: '127.0.0.61',
  ...form({ email: 'bench@demo.example', password: PASSWORD }),
});
const refused = await Promise.all(storm);
const tokenMs = refused.map((r) => r.ms).sort((a, b) => a - b)[Math.floor(refused.length / 2)]!;
console.log(
  `2. 32 made-up invitation tokens at once: median answer ${round(tokenMs)} ms; DNS lookup ${round(dnsQuiet)} ms → ${round(dnsStorm)} ms; a real sign-in ${round(signQuiet.ms)} ms → ${round(signStorm.ms)} ms`,
);

// 3. Forty wrong passwords at once, then the right one: through inject, as one address may open only
// five connections here.
const signInAs = async (password: string) =>
  (
    await service.app.inject({
      method: 'POST',
      url: '/portal/sign-in',
      remoteAddress: '10.0.0.70',
      ...(({ body, headers }) => ({ payload: body, headers }))(
        form({ email: 'bench@demo.example', password }),
      ),
    })
  ).statusCode;
const wrong = Array.from({ length: 40 }, (_, i) => signInAs(`wrong ${i} xyz abc`));
// Sent while the wrong ones are still being checked, as the attack did.
const right = await signInAs(PASSWORD);
const burst = await Promise.all(wrong);
const count = (s: number) => burst.filter((b) => b === s).length;
console.log(
  `3. 40 wrong passwords at once: ${count(401)} answered 401 (each a hash), ${count(429)} 429; the right one sent with them: ${right === 303 ? 'signed in (303)' : `refused (${right})`}`,
);

await service.stop();
await admin.query(`drop database if exists ${name} with (force)`);
await admin.end();
rmSync(dataDir, { recursive: true, force: true });

import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { sql } from 'kysely';
import pino from 'pino';
import { loadConfig } from '../src/config.ts';
import { startWorkers } from '../src/jobs/workers.ts';
import { startService } from '../src/service.ts';
import { signatureHeader } from '../src/signature.ts';

/**
 * `npm run bench:issuance`: how fast a backlog of paid orders is issued. BENCH_ORDERS (default
 * 2000) RCA orders are created and paid from the wallet with the job workers off, then the workers
 * start and the clock runs until every order is `completed` (policy PDF stored, webhook enqueued).
 * On the embedded PostgreSQL in a fresh DATA_DIR, or on DATABASE_URL when set.
 */
const ORDERS = Number(process.env.BENCH_ORDERS || 2000);

const dir = mkdtempSync(join(tmpdir(), 'polita-issuance-'));
const config = loadConfig({
  ...process.env,
  DATA_DIR: dir,
  SANDBOX: 'true',
  LOG_LEVEL: 'warn',
  RATE_LIMIT_PER_MINUTE: '1000000',
});
const service = await startService(config, { logger: pino({ level: 'warn' }), workers: false });
try {
  const demo = service.demo!;
  const call = async (endpoint: string, body: unknown) => {
    const payload = JSON.stringify(body);
    const res = await service.app.inject({
      method: 'POST',
      url: `/v1/${endpoint}`,
      headers: {
        'content-type': 'application/json',
        'x-hmac-signature': signatureHeader(demo.id, demo.secret, payload),
      },
      payload,
    });
    if (res.statusCode !== 200) throw new Error(`${endpoint} answered ${res.statusCode}: ${res.body}`);
    return res.json() as { id: string; offers: { min_start_date: string; company: string }[] };
  };
  await service.app.inject({
    method: 'POST',
    url: '/admin/partners/demo/wallet/credits',
    headers: { authorization: `Bearer ${service.adminToken}`, 'content-type': 'application/json' },
    payload: JSON.stringify({ wallet: 'online', amount: 10_000_000, reference: 'bench-issuance' }),
  });
  const offer = (
    await call('get-offers', { product: 'rca', vehicle: '100000001', duration: 365, idnx: '2003000000016' })
  ).offers[0]!;
  const started = Date.now();
  for (let i = 0; i < ORDERS; i += 50) {
    await Promise.all(
      Array.from({ length: Math.min(50, ORDERS - i) }, async () => {
        const order = await call('create-order', {
          customer: { phone: '+37369123456', name: 'Bench' },
          products: [
            {
              product: 'rca',
              vehicle: '100000001',
              start_date: offer.min_start_date,
              duration: 365,
              insurance_company: offer.company,
              idnx: '2003000000016',
            },
          ],
        });
        await call('pay-order-from-balance', { id: order.id });
      }),
    );
  }
  console.log(`${ORDERS} orders paid in ${((Date.now() - started) / 1000).toFixed(1)} s; issuing…`);

  const completed = async () =>
    (
      await sql<{ n: number }>`select count(*)::int as n from orders where status = 'completed'`.execute(
        service.svc.db,
      )
    ).rows[0]!.n;
  const t0 = performance.now();
  await startWorkers(service.boss, service.svc);
  let done = 0;
  let last = { at: t0, done: 0 };
  while (done < ORDERS) {
    await new Promise((r) => setTimeout(r, 1000));
    done = await completed();
    const now = performance.now();
    console.log(`  ${done} completed, ${(((done - last.done) * 1000) / (now - last.at)).toFixed(0)}/s`);
    last = { at: now, done };
    if (now - t0 > 600_000) break;
  }
  const seconds = (performance.now() - t0) / 1000;
  console.log(
    `issuance: ${done} orders completed in ${seconds.toFixed(1)} s = ${(done / seconds).toFixed(1)} orders/s`,
  );
} finally {
  await service.stop();
  rmSync(dir, { recursive: true, force: true });
}

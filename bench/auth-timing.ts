import { randomBytes } from 'node:crypto';
import Fastify from 'fastify';
import type { PartnerDirectory } from '../src/app/partner-directory.ts';
import type { SharedWindowCounter } from '../src/app/rate-limit-store.ts';
import type { PartnerWithSecrets } from '../src/db/repos/partners.ts';
import { partnerAuthentication } from '../src/http/partner-auth.ts';
import { keepSignedBytes } from '../src/http/raw-body.ts';

/**
 * `npm run bench:auth-timing`: an unknown partner id takes as long to refuse as a known partner's
 * wrong signature (decision 0046). The signature check of /v1 (src/http/partner-auth.ts, as the
 * service installs it) answers requests with a 30 KB body and a wrong signature, alternately for a
 * known partner and an unknown id, both already in the partner cache (as a prober's repeated ids
 * are), so the time is the check's own. Prints the median and the quartiles of each, in µs.
 * BENCH_SAMPLES sets the samples of each kind (default 2 500).
 */
const samples = Number(process.env.BENCH_SAMPLES || 2_500);
const known: PartnerWithSecrets = {
  id: 'pknown00001',
  name: 'Known',
  webhook_url: null,
  disabled: false,
  margin_bp: 0,
  rate_limit_per_minute: null,
  require_timestamped_signature: false,
  webhook_events: ['completed'],
  renewal_notice_days: 30,
  created_at: new Date(),
  updated_at: new Date(),
  secrets: [randomBytes(32).toString('hex')],
  secretsChangeAt: null,
  hasWallet: true,
};
// Both answers from the cache: a known partner, and an id known not to exist.
const directory = {
  cached: (id: string) => (id === known.id ? known : undefined),
  get: async (id: string) => (id === known.id ? known : undefined),
} as unknown as PartnerDirectory;
// No failure limit in the way: every request is measured to its 403.
const counter = {
  read: () => ({ current: 0, ttl: 60_000 }),
  incr: () => ({ current: 0, ttl: 60_000 }),
} as unknown as SharedWindowCounter;

const app = Fastify({ bodyLimit: 64 * 1024 });
await app.register(async (scope) => {
  // The pipeline's first three steps (src/http/partner-pipeline.ts): the signature check alone.
  const authentication = partnerAuthentication(scope, directory, {
    counter,
    failuresPerMinute: Number.MAX_SAFE_INTEGER,
  });
  scope.addHook('onRequest', authentication.requireSignatureHeader);
  keepSignedBytes(scope);
  scope.addHook('preValidation', authentication.verifySignature);
  scope.post('/v1/get-balance', async () => ({}));
});
await app.ready();

const body = JSON.stringify({ padding: 'x'.repeat(30 * 1024) });
const wrong = '0'.repeat(128);
const request = (id: string) =>
  app.inject({
    method: 'POST',
    url: '/v1/get-balance',
    headers: { 'content-type': 'application/json', 'x-hmac-signature': `${id}:${wrong}` },
    payload: body,
  });

const times: Record<'known' | 'unknown', number[]> = { known: [], unknown: [] };
for (let i = 0; i < samples + 200; i++) {
  // Alternated, so that whatever else the machine does falls on both alike; the first 200 warm up.
  for (const kind of i % 2 ? (['known', 'unknown'] as const) : (['unknown', 'known'] as const)) {
    const t = process.hrtime.bigint();
    const res = await request(kind === 'known' ? known.id : 'punknown0001');
    const µs = Number(process.hrtime.bigint() - t) / 1000;
    if (res.statusCode !== 403) throw new Error(`expected 403, got ${res.statusCode}`);
    if (i >= 200) times[kind].push(µs);
  }
}
await app.close();

const quantile = (xs: number[], q: number) => [...xs].sort((a, b) => a - b)[Math.floor((xs.length - 1) * q)]!;
console.log(`30 KB body, wrong signature, ${samples} samples each (µs)`);
console.log('| partner id | p25 | median | p75 |');
console.log('| --- | --- | --- | --- |');
for (const kind of ['known', 'unknown'] as const) {
  const xs = times[kind];
  console.log(
    `| ${kind} | ${quantile(xs, 0.25).toFixed(0)} | ${quantile(xs, 0.5).toFixed(0)} | ${quantile(xs, 0.75).toFixed(0)} |`,
  );
}
const ratio = quantile(times.unknown, 0.5) / quantile(times.known, 0.5);
console.log(`unknown / known median: ${ratio.toFixed(2)}`);

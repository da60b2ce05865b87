import fastJson from 'fast-json-stringify';
import { readFileSync } from 'node:fs';
import { loadCatalogue } from '../src/app/catalogue.ts';
import { quote } from '../src/app/quote.ts';
import type { Services } from '../src/app/services.ts';
import { compileJsonWriter } from '../src/http/json-writer.ts';
import { quoteResponseOf, sharedSchemas } from '../src/http/schemas.ts';
import { SandboxIssuer } from '../src/providers/sandbox/issuer.ts';
import { SandboxVehicleRegistry } from '../src/providers/sandbox/vehicles.ts';

/**
 * `npm run bench:json`: why get-offers medical has a serialiser of its own (decision 0041). For every
 * get-offers example of the partner guide, the answer is serialised to UTF-8 bytes by
 * fast-json-stringify (what Fastify does with the product's response schema) and by
 * src/http/json-writer.ts; both write the same bytes (test/http/json-writer.test.ts), and this
 * prints the time each takes, the best of several rounds.
 */
const svc = {
  catalogue: loadCatalogue(),
  providers: {
    vehicles: new SandboxVehicleRegistry(),
    issuer: new SandboxIssuer(),
    roVignettes: { findActive: async () => null },
  },
  clock: { now: async () => Date.parse('2026-11-21T10:00:00+02:00') },
} as unknown as Services;
const partner = { id: 'bench', name: 'Bench', margin_bp: 0 } as Parameters<typeof quote>[1];

const guide = readFileSync(new URL('../docs/partner-guide.md', import.meta.url), 'utf8');
const bodies = guide
  .split('```jsonc')
  .find((b) => b.trimStart().startsWith('// get-offers'))!
  .split('```')[0]!
  .split('\n')
  .map((l) => l.trim())
  .filter((l) => l.startsWith('{'))
  .map((l) => JSON.parse(l) as { product: string } & Record<string, unknown>);

const refs = Object.fromEntries(sharedSchemas.map((s) => [s.$id as string, s]));
/** µs a call: the best of 20 rounds of n / 20 calls, after n / 10 to warm up (other work on the machine only slows a round). */
const time = (n: number, f: () => unknown) => {
  for (let i = 0; i < n / 10; i++) f();
  let best = Number.POSITIVE_INFINITY;
  for (let round = 0; round < 20; round++) {
    const t = process.hrtime.bigint();
    for (let i = 0; i < n / 20; i++) f();
    best = Math.min(best, Number(process.hrtime.bigint() - t) / (n / 20) / 1000);
  }
  return best;
};

console.log('| product | bytes | fast-json-stringify µs | json-writer µs | speed-up |');
console.log('| --- | --- | --- | --- | --- |');
for (const body of bodies) {
  const value = await quote(svc, partner, body);
  const schema = quoteResponseOf(body.product);
  const reference = fastJson(schema as never, { schema: refs as never });
  const writer = compileJsonWriter(schema, sharedSchemas);
  const bytes = writer(value).length;
  const n = Math.max(2_000, Math.round(20_000_000 / bytes));
  const fjs = time(n, () => Buffer.from(reference(value)));
  const own = time(n, () => writer(value));
  console.log(
    `| ${body.product} | ${bytes} | ${fjs.toFixed(1)} | ${own.toFixed(1)} | ${(fjs / own).toFixed(1)}× |`,
  );
}

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
 * `npm run bench:json`: why get-offers has a serialiser of its own. For every get-offers example of
 * the README, the answer is serialised to UTF-8 bytes by fast-json-stringify (what Fastify would do
 * with the route's response schema) and by src/http/json-writer.ts; both write the same bytes
 * (test/http/json-writer.test.ts), and this prints the time each takes.
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

const readme = readFileSync(new URL('../README.md', import.meta.url), 'utf8');
const bodies = readme
  .split('```jsonc')
  .find((b) => b.trimStart().startsWith('// get-offers'))!
  .split('```')[0]!
  .split('\n')
  .map((l) => l.trim())
  .filter((l) => l.startsWith('{'))
  .map((l) => JSON.parse(l) as { product: string } & Record<string, unknown>);

const refs = Object.fromEntries(sharedSchemas.map((s) => [s.$id as string, s]));
const time = (n: number, f: () => unknown) => {
  for (let i = 0; i < n / 10; i++) f();
  const t = process.hrtime.bigint();
  for (let i = 0; i < n; i++) f();
  return Number(process.hrtime.bigint() - t) / n / 1000;
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

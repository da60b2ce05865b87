import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PRODUCT_MODULES } from '../../src/products/registry.ts';
import { startHarness, type Harness } from '../support/harness.ts';

/**
 * docs/api-reference.md against the API document the running service serves (/openapi.json, built
 * as test/http/openapi.test.ts builds it): every /v1 endpoint has its section, every request and
 * response field (per product where the schemas are per product), header and status is named where
 * the page's "Changing this page" says it goes, and every link and citation of the page resolves.
 * Each failure names what to add and where, so whoever adds an endpoint or a field documents it.
 */
const PAGE = 'docs/api-reference.md';
const root = new URL('../../', import.meta.url).pathname;
const page = readFileSync(join(root, PAGE), 'utf8');
const lines = page.split('\n');

interface Schema {
  title?: string;
  $ref?: string;
  enum?: unknown[];
  properties?: Record<string, Schema>;
  items?: Schema;
  additionalProperties?: Schema | boolean;
  oneOf?: Schema[];
  anyOf?: Schema[];
  discriminator?: { propertyName: string };
}
interface Response {
  headers?: Record<string, unknown>;
  content?: Record<string, { schema: Schema }>;
}
interface Operation {
  parameters?: { in: string; name: string }[];
  requestBody?: { content: Record<string, { schema: Schema }> };
  responses: Record<string, Response>;
}
interface OpenApi {
  paths: Record<string, Record<string, Operation>>;
  components: { schemas: Record<string, Schema> };
}

/** A heading's text as it renders: no backticks, a link's text only. */
const plain = (text: string) =>
  text
    .replace(/\[([^\]]*)\]\([^)]*\)/g, '$1')
    .replace(/`/g, '')
    .trim();

interface Heading {
  level: number;
  title: string;
  start: number;
  /** The line after the section, its subsections included. */
  end: number;
}
const headings: Heading[] = [];
{
  let fenced = false;
  lines.forEach((line, i) => {
    if (/^\s*```/.test(line)) fenced = !fenced;
    const m = fenced ? null : /^(#{1,6}) (.+)$/.exec(line);
    if (m) headings.push({ level: m[1]!.length, title: plain(m[2]!), start: i, end: lines.length });
  });
  for (const [i, h] of headings.entries())
    h.end = headings.slice(i + 1).find((n) => n.level <= h.level)?.start ?? lines.length;
}

/** The lines of the section at `path` (heading titles, each nested in the one before), if it exists. */
function section(path: readonly string[]): string[] | undefined {
  let within: Omit<Heading, 'title'> = { level: 0, start: -1, end: lines.length };
  for (const title of path) {
    const h = headings.find(
      (x) => x.start > within.start && x.start < within.end && x.level > within.level && x.title === title,
    );
    if (!h) return undefined;
    within = h;
  }
  return lines.slice(within.start, within.end);
}

const SEPARATOR = /^\|[\s:|-]+\|$/;
/** What the first cells of the section's table rows name (`a, b` names two); header rows excluded. */
function rowNames(text: readonly string[]): Set<string> {
  const names = new Set<string>();
  text.forEach((line, i) => {
    if (!line.startsWith('|') || SEPARATOR.test(line) || SEPARATOR.test(text[i + 1] ?? '')) return;
    for (const name of (line.split('|')[1] ?? '').split(',')) names.add(name.replace(/`/g, '').trim());
  });
  return names;
}

/** GitHub's anchors of the page's headings, a repeated one numbered as GitHub numbers it. */
const anchors = new Set<string>();
for (const h of headings) {
  const base = h.title
    .toLowerCase()
    .replace(/[^\p{L}\p{M}\p{N}\p{Pc} -]/gu, '')
    .replace(/ /g, '-');
  let anchor = base;
  for (let n = 1; anchors.has(anchor); n++) anchor = `${base}-${n}`;
  anchors.add(anchor);
}

const pair = (schema: Schema, at: string): [Schema, string] => [schema, at];
const show = (path: readonly string[]) => `"${path.join(' › ')}"`;

/** A name the page must give as a table row in one of `places` (section paths), and why. */
interface Need {
  places: string[][];
  name: string;
  what: string;
}
const unmet = (needs: readonly Need[]) =>
  [
    ...new Set(
      needs
        .filter((n) => !n.places.some((p) => rowNames(section(p) ?? []).has(n.name)))
        .map((n) => {
          const exists = n.places.filter((p) => section(p));
          return exists.length
            ? `${n.what}: \`${n.name}\` is not a row of ${exists.map(show).join(' or ')}; add a row whose first cell is \`${n.name}\`, with its type, whether it is required, its format and its source (contract or Polita and the record)`
            : `${n.what}: ${PAGE} has no section ${n.places.map(show).join(' or ')}; add it (see "Changing this page") with a row for \`${n.name}\``;
        }),
    ),
  ].sort();

const PRODUCTS = PRODUCT_MODULES.map((m) => m.product as string);
/** Where each named schema's fields are documented; any other is a section of its name under Objects. */
const COMPONENT_PLACES: Record<string, string[][]> = {
  Offer: [['Objects', 'Offer'], ...PRODUCTS.map((p) => ['Products', p, 'Offers'])],
  IssuedProduct: [['Objects', 'Issued product'], ...PRODUCTS.map((p) => ['Products', p, 'Issued product'])],
  MedicalOffers: [['Products', 'medical', 'Offers']],
};
/** A product's request variant, by its title's suffix (`RcaQuote`, `RcaOrderItem`), is this table of its product. */
const VARIANT_TABLES: Record<string, string> = {
  Quote: 'get-offers request',
  OrderItem: 'create-order item',
};

/**
 * What the page must name of an operation's schemas (`[schema, "request"]`, `[schema, "response 200"]`):
 * each field at its path in its endpoint's section; a named schema's fields in its section under
 * Objects (or its products' tables); a product's request variant in that product's table.
 */
function fieldNeeds(doc: OpenApi, endpoint: string, schemas: [Schema, string][]): Need[] {
  const needs: Need[] = [];
  const seen = new Set<string>();
  const walk = (s: Schema, path: string, places: string[][], what: string): void => {
    if (s.$ref) {
      const name = s.$ref.replace('#/components/schemas/', '');
      if (seen.has(name)) return;
      seen.add(name);
      const places = COMPONENT_PLACES[name] ?? [['Objects', name]];
      walk(doc.components.schemas[name]!, '', places, `the schema ${name} of /openapi.json`);
      return;
    }
    if (s.discriminator && s.oneOf) {
      for (const branch of s.oneOf) {
        const variant = branch.$ref
          ? doc.components.schemas[branch.$ref.replace('#/components/schemas/', '')]!
          : branch;
        const product = String(variant.properties?.[s.discriminator.propertyName]?.enum?.[0]);
        const kind = Object.keys(VARIANT_TABLES).find((k) => variant.title?.endsWith(k));
        const table = kind
          ? VARIANT_TABLES[kind]!
          : `${variant.title} (unknown to VARIANT_TABLES in this test)`;
        walk(variant, '', [['Products', product, table]], `/v1/${endpoint} ${product} (${variant.title})`);
      }
      return;
    }
    for (const alt of [...(s.anyOf ?? []), ...(s.oneOf ?? [])]) walk(alt, path, places, what);
    for (const [key, child] of Object.entries(s.properties ?? {})) {
      const at = path ? `${path}.${key}` : key;
      needs.push({ places, name: at, what });
      walk(child, at, places, what);
    }
    if (s.items) walk(s.items, `${path}[]`, places, what);
    if (typeof s.additionalProperties === 'object') walk(s.additionalProperties, `${path}.*`, places, what);
  };
  for (const [schema, at] of schemas) walk(schema, '', [['Endpoints', endpoint]], `/v1/${endpoint} ${at}`);
  return needs;
}

let h: Harness;
let doc: OpenApi;
let v1: [string, Operation][];
beforeAll(async () => {
  h = await startHarness();
  doc = (await h.service.app.inject({ method: 'GET', url: '/openapi.json' })).json();
  v1 = Object.entries(doc.paths)
    .filter(([path]) => path.startsWith('/v1/'))
    .map(([path, item]) => [path.slice('/v1/'.length), item.post!]);
});
afterAll(() => h?.close());

describe(`${PAGE} against /openapi.json`, () => {
  it('has a section for every /v1 endpoint, and none for an endpoint the service does not serve', () => {
    expect(v1.length).toBeGreaterThanOrEqual(6);
    const problems = v1.flatMap(([name]) => {
      const text = section(['Endpoints', name]);
      if (!text) return [`/v1/${name} has no section: add "### ${name}" under "## Endpoints"`];
      return text.join('\n').includes(`POST /v1/${name}`)
        ? []
        : [`the section "### ${name}" does not say \`POST /v1/${name}\``];
    });
    const endpoints = headings.find((x) => x.level === 2 && x.title === 'Endpoints');
    const served = new Set(v1.map(([name]) => name));
    for (const x of headings)
      if (
        endpoints &&
        x.level === 3 &&
        x.start > endpoints.start &&
        x.start < endpoints.end &&
        !served.has(x.title)
      )
        problems.push(`"### ${x.title}" under "## Endpoints" names no /v1 path the service serves`);
    expect(problems).toEqual([]);
  });

  it('names every request field, header parameter and response field of every /v1 operation where it belongs', () => {
    const needs = v1.flatMap(([name, op]) => {
      const body = op.requestBody?.content['application/json']?.schema;
      const schemas: [Schema, string][] = [
        ...(body ? [pair(body, 'request')] : []),
        ...Object.entries(op.responses).flatMap(([status, r]) => {
          const schema = r.content?.['application/json']?.schema;
          return schema ? [pair(schema, `response ${status}`)] : [];
        }),
      ];
      const parameters = (op.parameters ?? []).map((p) => ({
        places: [['Endpoints', name]],
        name: p.name,
        what: `/v1/${name} ${p.in} parameter`,
      }));
      return [...fieldNeeds(doc, name, schemas), ...parameters];
    });
    expect(unmet(needs)).toEqual([]);
  });

  it("names every field of each product's offers and issued products in that product's tables", () => {
    const needs = PRODUCT_MODULES.flatMap((m) => [
      ...Object.keys(m.schemas.offer).map((name) => ({
        places: [['Products', m.product, 'Offers']],
        name,
        what: `${m.product} offers (schemas.offer of src/products)`,
      })),
      ...Object.keys(m.schemas.issued).map((name) => ({
        places: [['Products', m.product, 'Issued product']],
        name,
        what: `${m.product} issued product (schemas.issued of src/products)`,
      })),
    ]);
    expect(unmet(needs)).toEqual([]);
  });

  it("lists every status of every /v1 operation, and the response headers, in its endpoint's section", () => {
    const problems = v1.flatMap(([name, op]) => {
      const text = section(['Endpoints', name]) ?? [];
      const rows = rowNames(text);
      return Object.entries(op.responses).flatMap(([status, r]) => [
        ...(rows.has(status)
          ? []
          : [
              `/v1/${name} answers ${status}: add a row whose first cell is ${status} to the status table of "### ${name}", with the exact error and message and when`,
            ]),
        ...Object.keys(r.headers ?? {})
          .filter((header) => !text.join('\n').toLowerCase().includes(header.toLowerCase()))
          .map((header) => `/v1/${name} ${status} carries the header ${header}: name it in "### ${name}"`),
      ]);
    });
    expect(problems).toEqual([]);
  });
});

describe(`${PAGE}'s links and citations`, () => {
  it('links decision records that exist, defines every record it tags, and anchors its headings make', () => {
    const problems: string[] = [];
    const records = [...page.matchAll(/(?:\]\(|\]: )(decisions\/[\w.-]+\.md)/g)].map((m) => m[1]!);
    for (const file of new Set(records))
      if (!existsSync(join(root, 'docs', file))) problems.push(`links docs/${file}, which does not exist`);
    const defined = new Set([...page.matchAll(/^\[(\d{4})\]: /gm)].map((m) => m[1]!));
    for (const [, used] of page.matchAll(/\[(\d{4})\](?![(:])/g))
      if (!defined.has(used!))
        problems.push(`tags [${used}] without a line "[${used}]: decisions/${used}-….md"`);
    for (const [, anchor] of page.matchAll(/\]\(#([^)]+)\)/g))
      if (!anchors.has(anchor!)) problems.push(`links #${anchor}, which no heading makes`);
    expect([...new Set(problems)]).toEqual([]);
  });

  it('is cited from the code and the docs by anchors that exist', () => {
    const problems: string[] = [];
    for (const file of citingFiles())
      for (const [, anchor] of readFileSync(join(root, file), 'utf8').matchAll(/api-reference\.md#([\w-]+)/g))
        if (!anchors.has(anchor!)) problems.push(`${file} cites ${PAGE}#${anchor}, which no heading makes`);
    expect(problems).toEqual([]);
  });

  it('leaves no comment in src deferring to a document outside the repository ("the spec")', () => {
    const outside = /\bthe spec\b|\bspec(?:['’]s\b| rules?\b|:)|\(spec\)|specification/i;
    const problems = sourceFiles('src').flatMap((file) =>
      readFileSync(join(root, file), 'utf8')
        .split('\n')
        .flatMap((line, i) => {
          const t = line.trim();
          const comment = /^(?:\*|\/\*|\/\/|--)/.test(t)
            ? t
            : line.includes('// ')
              ? line.slice(line.indexOf('// '))
              : '';
          return outside.test(comment)
            ? [`${file}:${i + 1} cites "the spec": cite ${PAGE}#<section> or a decision record instead`]
            : [];
        }),
    );
    expect(problems).toEqual([]);
  });
});

/** The repository's files under `dir` with code or templates. */
function sourceFiles(dir: string): string[] {
  return readdirSync(join(root, dir), { recursive: true, withFileTypes: true })
    .filter((e) => e.isFile() && /\.(?:ts|js|eta)$/.test(e.name))
    .map((e) => join(e.parentPath, e.name).slice(root.length));
}

function citingFiles(): string[] {
  const docs = readdirSync(join(root, 'docs'), { recursive: true })
    .map(String)
    .filter((f) => f.endsWith('.md'))
    .map((f) => join('docs', f));
  return [...sourceFiles('src'), ...docs, 'README.md', 'ARCHITECTURE.md', 'CONTRIBUTING.md', 'sdk/README.md'];
}

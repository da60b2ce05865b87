import { readFileSync } from 'node:fs';

/** The partner guide, where the products table and the example requests live. */
const guide = readFileSync(new URL('../../docs/partner-guide.md', import.meta.url), 'utf8');

/** The request bodies of the partner guide's ```jsonc block that starts with `// <marker>`, one a line. */
export function guideExamples(marker: string): string[] {
  const block = guide.split('```jsonc').find((b) => b.trimStart().startsWith(`// ${marker}`));
  if (!block) throw new Error(`docs/partner-guide.md has no \`\`\`jsonc block starting with // ${marker}`);
  return block
    .split('```')[0]!
    .split('\n')
    .map((l) => l.trim())
    .filter((l) => l.startsWith('{'));
}

/** What the partner guide's products table promises of a product's answers. */
export interface GuideProduct {
  /** Fields the offers carry ("offers carry"; `coverage[]` as `coverage`). */
  offerFields: string[];
  /** The offers are an object keyed by insured amount, each a list ("keyed by insured amount"). */
  keyed: boolean;
  /** Fields create-order's answer has beyond the common ones ("answer has …" under "create-order sends"). */
  orderFields: string[];
}

const backticked = (text: string) => [...text.matchAll(/`([^`]+)`/g)].map((m) => m[1]!.replace(/\[\]$/, ''));

/** The partner guide's products table (## Products), by product. */
export function guideProducts(): Map<string, GuideProduct> {
  const rows = guide
    .split('\n')
    .filter((l) => l.startsWith('|'))
    .map((l) =>
      l
        .split('|')
        .slice(1, -1)
        .map((c) => c.trim()),
    );
  const header = rows.findIndex((r) => r.includes('offers carry'));
  if (header < 0)
    throw new Error('docs/partner-guide.md has no products table with an "offers carry" column');
  const col = (name: string) => rows[header]!.indexOf(name);
  const [product, offers, order] = [col('product'), col('offers carry'), col('create-order sends')];
  const products = new Map<string, GuideProduct>();
  for (const row of rows.slice(header + 2)) {
    const name = /^`([^`]+)`$/.exec(row[product] ?? '')?.[1];
    if (!name) break;
    const carry = row[offers]!;
    products.set(name, {
      offerFields: backticked(carry),
      keyed: carry.startsWith('keyed by'),
      orderFields: backticked(/answer has ([^)]*)\)/.exec(row[order]!)?.[1] ?? ''),
    });
  }
  return products;
}

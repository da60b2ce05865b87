import { readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { Type, type TSchema } from '@sinclair/typebox';
import { Value } from '@sinclair/typebox/value';
import { parseRate } from '../domain/money.ts';
import { PRODUCT_MODULES } from '../products/registry.ts';
import { CancellationCatalogueSchema, type CancellationRule } from '../products/cancellation.ts';
import type { CommonCatalogue } from '../products/types.ts';

/**
 * The catalogue is data: tariffs, insurers, durations, rates and fees live in catalogue/*.json,
 * which the operator edits without touching code. It is loaded and validated once at start;
 * an invalid file stops the start with the file and the field named.
 */
export interface Catalogue {
  common: CommonCatalogue;
  products: Map<string, unknown>;
  /** Each product's `cancellation` rule, read from its catalogue file (src/products/cancellation.ts). */
  cancellation: Map<string, CancellationRule>;
}

export const DEFAULT_CATALOGUE_DIR = resolve(import.meta.dirname, '../../catalogue');

const CommonSchema = Type.Object({
  version: Type.String(),
  exchange_rates: Type.Record(
    Type.String({ pattern: '^[A-Z]{3}$' }),
    Type.String({ pattern: '^[0-9]+(\\.[0-9]{1,4})?$' }),
  ),
  insurers: Type.Array(Type.Object({ code: Type.String(), name: Type.String() }), { minItems: 1 }),
  wallet_eligible_products: Type.Array(Type.String()),
});

function load<T>(dir: string, file: string, schema: TSchema): T {
  const path = join(dir, file);
  let data: unknown;
  try {
    data = JSON.parse(readFileSync(path, 'utf8'));
  } catch (err) {
    throw new Error(`catalogue ${path}: ${(err as Error).message}`, { cause: err });
  }
  const first = Value.Errors(schema, data).First();
  if (first) throw new Error(`catalogue ${path}: ${first.path || '/'} ${first.message}`);
  return data as T;
}

export function loadCatalogue(dir = DEFAULT_CATALOGUE_DIR): Catalogue {
  const common = load<CommonCatalogue>(dir, 'common.json', CommonSchema);
  for (const text of Object.values(common.exchange_rates)) parseRate(text);
  const products = new Map<string, unknown>();
  const cancellation = new Map<string, CancellationRule>();
  for (const m of PRODUCT_MODULES) {
    if (!m.catalogue) continue;
    products.set(m.product, load(dir, m.catalogue.file, m.catalogue.schema));
    const { cancellation: rule } = load<{ cancellation: CancellationRule }>(
      dir,
      m.catalogue.file,
      CancellationCatalogueSchema,
    );
    cancellation.set(m.product, rule);
  }
  return { common, products, cancellation };
}

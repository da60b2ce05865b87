import { baggage } from './baggage.ts';
import { greenCard } from './green-card.ts';
import { medical } from './medical.ts';
import { rca } from './rca.ts';
import { roadTax } from './road-tax.ts';
import { roadside } from './roadside.ts';
import { vignetteEu } from './vignette-eu.ts';
import { vignetteMd } from './vignette-md.ts';
import { vignetteRo } from './vignette-ro.ts';
import type { ProductCode, ProductModule } from './types.ts';

/**
 * Every product the service sells. A product appears on the wire only once its module is here;
 * the request schemas, offer and issued-product shapes are all derived from this list.
 */
// eslint-disable-next-line @typescript-eslint/no-explicit-any
export const PRODUCT_MODULES: ProductModule<any>[] = [
  rca,
  vignetteMd,
  vignetteEu,
  roadside,
  greenCard,
  medical,
  baggage,
  roadTax,
  vignetteRo,
];

// eslint-disable-next-line @typescript-eslint/no-explicit-any
export function productModule(code: string): ProductModule<any> | undefined {
  return PRODUCT_MODULES.find((m) => m.product === (code as ProductCode));
}

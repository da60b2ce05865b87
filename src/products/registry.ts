import { baggage } from './baggage.ts';
import { greenCard } from './green-card.ts';
import { medical } from './medical.ts';
import { rca } from './rca.ts';
import { roadTax } from './road-tax.ts';
import { roadside } from './roadside.ts';
import { vignetteEu } from './vignette-eu.ts';
import { vignetteMd } from './vignette-md.ts';
import { vignetteRo } from './vignette-ro.ts';
import type { ProductModule } from './types.ts';

/**
 * Every product the service sells, the one list of them. A product appears on the wire only once
 * its module is here: the product codes, the request schemas, the offer and issued-product shapes
 * and the API document are all derived from this list, in its order.
 */
export const PRODUCT_MODULES = [
  rca,
  vignetteMd,
  vignetteEu,
  roadside,
  greenCard,
  medical,
  baggage,
  roadTax,
  vignetteRo,
] as const satisfies readonly ProductModule[];

/** The products the service sells: the codes of the registry's modules, nothing written twice. */
export type ProductCode = (typeof PRODUCT_MODULES)[number]['product'];

export const PRODUCTS: readonly ProductCode[] = PRODUCT_MODULES.map((m) => m.product);

const byCode = new Map<string, ProductModule>(PRODUCT_MODULES.map((m) => [m.product, m]));

/** The module of a product code, as the order and quote use cases dispatch to it. */
export const productModule = (code: string): ProductModule | undefined => byCode.get(code);

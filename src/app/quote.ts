import { badRequest, DomainError, recoded } from '../domain/errors.ts';
import type { PartnerRow } from '../db/schema.ts';
import { productModule } from '../products/registry.ts';
import { catalogueOf, productContext } from './product-context.ts';
import type { Services } from './services.ts';

/**
 * get-offers. Product rules answer 400 here with the reason as is (500 `[API] …` on create-order),
 * and an unknown vehicle answers 404.
 */
export async function quote(
  svc: Services,
  partner: PartnerRow,
  body: { product: string } & Record<string, unknown>,
): Promise<object> {
  const m = productModule(body.product);
  if (!m) throw badRequest(`Unknown product ${body.product}`);
  try {
    const now = await svc.clock.now();
    return await m.quote(productContext(svc, now, partner), catalogueOf(svc, m), body);
  } catch (err) {
    if (err instanceof DomainError && err.code === 'product_rule') throw recoded(err, 'bad_request');
    if (err instanceof DomainError && err.code === 'vehicle_not_found')
      throw recoded(err, 'not_found', 'Vehicle not found');
    throw err;
  }
}

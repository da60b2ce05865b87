import { badRequest, DomainError, notFound } from '../domain/errors.ts';
import { andThen, type MaybePromise } from '../domain/maybe-promise.ts';
import type { PartnerRow } from '../db/schema.ts';
import { productModule } from '../products/registry.ts';
import { catalogueOf, productContext } from './product-context.ts';
import type { Services } from './services.ts';

/**
 * get-offers. Product rules answer 400 here with the reason as is (500 `[API] …` on create-order),
 * and an unknown vehicle answers 404. The offers come at once when the clock and the product had
 * what they needed in memory (src/domain/maybe-promise.ts), and a refusal is then thrown at once.
 */
export function quote(
  svc: Services,
  partner: PartnerRow,
  body: { product: string } & Record<string, unknown>,
): MaybePromise<object> {
  const m = productModule(body.product);
  if (!m) throw badRequest(`Unknown product ${body.product}`);
  let offers: MaybePromise<object>;
  try {
    offers = andThen(svc.clock.now(), (now) =>
      m.quote(productContext(svc, now, partner), catalogueOf(svc, m), body),
    );
  } catch (err) {
    return asQuoteError(err);
  }
  return offers instanceof Promise ? offers.catch(asQuoteError) : offers;
}

/** A product's refusal as get-offers answers it; anything else as it is. */
function asQuoteError(err: unknown): never {
  if (err instanceof DomainError && err.code === 'product_rule') throw badRequest(err.reason);
  if (err instanceof DomainError && err.code === 'vehicle_not_found') throw notFound('Vehicle not found');
  throw err;
}

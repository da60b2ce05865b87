import { localDate } from '../domain/time.ts';
import type { CustomerData } from '../db/schema.ts';
import type { ProductContext, ProductModule } from '../products/types.ts';
import type { Services } from './services.ts';

export function productContext(
  svc: Services,
  now: number,
  partner: { id: string; name: string; margin_bp: number },
  customer?: CustomerData,
): ProductContext {
  return {
    now,
    today: localDate(now),
    partner: { id: partner.id, name: partner.name, marginBp: partner.margin_bp },
    ...(customer ? { customer } : {}),
    common: svc.catalogue.common,
    providers: svc.providers,
  };
}

export const catalogueOf = (svc: Services, m: ProductModule<unknown>): unknown =>
  svc.catalogue.products.get(m.product);

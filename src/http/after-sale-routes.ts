import { Type } from '@sinclair/typebox';
import { partnerActor } from '../app/actor.ts';
import { confirmCancellation, previewCancellation } from '../app/cancel-order.ts';
import { confirmCorrection, PLATE_PATTERN, previewCorrection } from '../app/correct-order.ts';
import type { Services } from '../app/services.ts';
import type { IdempotentRoute } from './idempotency.ts';
import { Order, partnerDoc as doc } from './schemas.ts';
import { errorResponses as errors, type App } from './typed.ts';

const OrderId = Type.String({ minLength: 1, maxLength: 64, description: 'The order id' });
const QuoteId = Type.String({
  minLength: 1,
  maxLength: 100,
  description: 'The preview’s quote_id: present, the call confirms; absent, it previews',
});
const ValidUntil = Type.String({ description: 'ISO-8601 with offset: the quote’s end (10 minutes)' });
const Reason = Type.String({ description: 'Why not, in a sentence for a person' });

export const CancelPreview = Type.Object(
  {
    id: Type.String(),
    cancellable: Type.Boolean(),
    refund: Type.Optional(
      Type.Object({
        amount: Type.Number({ description: 'MDL refunded' }),
        fee: Type.Number({ description: 'MDL withheld' }),
        currency: Type.Literal('MDL'),
        to: Type.Union([Type.Literal('wallet'), Type.Literal('customer')]),
      }),
    ),
    quote_id: Type.Optional(Type.String()),
    valid_until: Type.Optional(ValidUntil),
    reason: Type.Optional(Reason),
  },
  { description: 'The preview: the refund and a quote, or why the order cannot be cancelled' },
);

export const CorrectPreview = Type.Object(
  {
    id: Type.String(),
    correctable: Type.Boolean(),
    quote_id: Type.Optional(Type.String()),
    valid_until: Type.Optional(ValidUntil),
    reason: Type.Optional(Reason),
  },
  { description: 'The preview: a quote, or why the order cannot be corrected' },
);

/** The fields a correction may change; any other is refused by name (correct-order). */
export const Changes = Type.Object(
  {
    plate_number: Type.Optional(
      Type.String({
        pattern: PLATE_PATTERN,
        description: 'The plate the partner typed (the product’s plate field, whatever it is called)',
      }),
    ),
    start_date: Type.Optional(Type.String({ format: 'date', description: 'yyyy-mm-dd' })),
  },
  { minProperties: 1, description: 'The corrected fields' },
);

export const afterSaleSchemas = {
  cancelOrder: {
    body: Type.Object({ id: OrderId, quote_id: Type.Optional(QuoteId) }),
    response: { 200: Type.Union([CancelPreview, Type.Ref(Order)]), ...errors },
  },
  correctOrder: {
    body: Type.Object({ id: OrderId, changes: Changes, quote_id: Type.Optional(QuoteId) }),
    response: { 200: Type.Union([CorrectPreview, Type.Ref(Order)]), ...errors },
  },
};

/**
 * cancel-order and correct-order (docs/api-reference.md#cancel-order, #correct-order): a preview
 * without `quote_id`, a confirmation with it. Registered from partnerRoutes, inside its scope, so
 * signatures, idempotency keys and the rate limit apply as to every /v1 endpoint.
 */
export async function afterSaleRoutes(app: App, svc: Services, idempotent: IdempotentRoute): Promise<void> {
  const options = <K extends keyof typeof afterSaleSchemas>(summary: string, operation: K) => ({
    schema: { ...doc(summary, operation), ...afterSaleSchemas[operation] },
    ...idempotent,
  });
  app.post(
    '/v1/cancel-order',
    options('Cancel a completed order: preview the refund, then confirm it', 'cancelOrder'),
    async ({ partner, body }) =>
      body.quote_id === undefined
        ? previewCancellation(svc, partner, body.id)
        : confirmCancellation(svc, partnerActor(partner.id), partner, body.id, body.quote_id),
  );
  app.post(
    '/v1/correct-order',
    options('Correct a completed order’s plate or start date: preview, then confirm', 'correctOrder'),
    async ({ partner, body }) =>
      body.quote_id === undefined
        ? previewCorrection(svc, partner, body.id, body.changes)
        : confirmCorrection(svc, partnerActor(partner.id), partner, body.id, body.changes, body.quote_id),
  );
}

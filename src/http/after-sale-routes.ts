import { partnerActor } from '../app/actor.ts';
import { Type } from '@sinclair/typebox';
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
  app.post(
    '/v1/cancel-order',
    {
      schema: {
        ...doc('Cancel a completed order: preview the refund, then confirm it', 'cancelOrder'),
        ...afterSaleSchemas.cancelOrder,
      },
      ...idempotent,
    },
    async (req) =>
      req.body.quote_id === undefined
        ? previewCancellation(svc, req.partner, req.body.id)
        : confirmCancellation(svc, partnerActor(req.partner.id), req.partner, req.body.id, req.body.quote_id),
  );
  app.post(
    '/v1/correct-order',
    {
      schema: {
        ...doc('Correct a completed order’s plate or start date: preview, then confirm', 'correctOrder'),
        ...afterSaleSchemas.correctOrder,
      },
      ...idempotent,
    },
    async (req) =>
      req.body.quote_id === undefined
        ? previewCorrection(svc, req.partner, req.body.id, req.body.changes)
        : confirmCorrection(
            svc,
            partnerActor(req.partner.id),
            req.partner,
            req.body.id,
            req.body.changes,
            req.body.quote_id,
          ),
  );
}

import { confirmOrder } from '../app/confirm-order.ts';
import { createOrder } from '../app/create-order.ts';
import { getOrder } from '../app/get-order.ts';
import { quote } from '../app/quote.ts';
import type { SharedWindowCounter } from '../app/rate-limit-store.ts';
import type { Services } from '../app/services.ts';
import { idempotentRoute } from './idempotency.ts';
import { installPartnerPipeline } from './partner-pipeline.ts';
import { eventRoutes } from './event-routes.ts';
import { compileJsonWriter } from './json-writer.ts';
import { partnerDoc as doc, quoteResponseOf, routes, sharedSchemas } from './schemas.ts';
import type { App } from './typed.ts';
import { walletRoutes } from './wallet-routes.ts';
import { afterSaleRoutes } from './after-sale-routes.ts';
import { refuseWebhookFields } from './webhook-fields.ts';

/**
 * The partner API: POST + JSON everywhere, signed, through the steps src/http/partner-pipeline.ts
 * names in order. Routes stay thin: call the use case, answer.
 */
export async function partnerRoutes(app: App, svc: Services, counter: SharedWindowCounter): Promise<void> {
  await installPartnerPipeline(app, svc, counter);
  const idempotent = idempotentRoute(svc);
  // A medical quote is mostly frozen catalogue text, which this writer encodes once (decision
  // 0041); Fastify writes every other answer from the route's response schema.
  const writeMedicalQuote = compileJsonWriter(quoteResponseOf('medical'), sharedSchemas);
  app.post(
    '/v1/get-offers',
    { schema: { ...doc('Quote prices for one product', 'getOffers'), ...routes.getOffers } },
    async (req, reply) => {
      const offers = await quote(svc, req.partner, req.body);
      reply.type('application/json; charset=utf-8');
      if (req.body.product === 'medical') return writeMedicalQuote(offers);
      // The product's own 200 shape, not the route's union of them: serialising a union first
      // validates the answer against each branch (Fastify compiles and keeps the function).
      reply.serializer(reply.compileSerializationSchema(quoteResponseOf(req.body.product), '200'));
      return offers;
    },
  );
  app.post(
    '/v1/create-order',
    {
      schema: { ...doc('Create a draft order', 'createOrder'), ...routes.createOrder },
      ...idempotent,
    },
    async (req) => createOrder(svc, req.partner, req.body),
  );
  app.post(
    '/v1/confirm-order',
    {
      schema: { ...doc('Record the customer payment of a draft', 'confirmOrder'), ...routes.confirmOrder },
      ...idempotent,
    },
    async (req) => confirmOrder(svc, req.partner, req.body.id, req.body.payment),
  );
  app.post(
    '/v1/get-order',
    {
      schema: { ...doc('Read an order', 'getOrder'), ...routes.getOrder },
      preValidation: refuseWebhookFields,
    },
    async (req) => getOrder(svc, req.partner, req.body.id),
  );
  await walletRoutes(app, svc, idempotent);
  await afterSaleRoutes(app, svc, idempotent);
  await eventRoutes(app, svc, counter, idempotent);
}

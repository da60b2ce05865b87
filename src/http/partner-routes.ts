import type { FastifyInstance } from 'fastify';
import { confirmOrder, type PaymentInput } from '../app/confirm-order.ts';
import { createOrder, type CreateOrderInput } from '../app/create-order.ts';
import { getOrder } from '../app/get-order.ts';
import { quote } from '../app/quote.ts';
import type { Services } from '../app/services.ts';
import { installPartnerAuth } from './partner-auth.ts';
import { quoteResponseOf, routes } from './schemas.ts';
import { walletRoutes } from './wallet-routes.ts';

/** The partner API: POST + JSON everywhere, signed. Routes stay thin: parse, call the use case, answer. */
export async function partnerRoutes(app: FastifyInstance, svc: Services): Promise<void> {
  installPartnerAuth(app, svc.partners);
  const doc = (summary: string) => ({ tags: ['partner'], summary, security: [{ hmac: [] }] });
  /**
   * get-offers serialisers by product, compiled on first use. They answer bytes: a reply with
   * diacritics is a two-byte string, which node would scan once for Content-Length and again to
   * encode it on write; Buffer.from encodes it once.
   */
  const offerSerializers = new Map<string, (payload: unknown) => Buffer>();

  app.post(
    '/v1/get-offers',
    { schema: { ...doc('Quote prices for one product'), ...routes.getOffers } },
    async (req, reply) => {
      const body = req.body as { product: string };
      const offers = await quote(svc, req.partner, body);
      let serialize = offerSerializers.get(body.product);
      if (!serialize) {
        const json = reply.compileSerializationSchema(quoteResponseOf(body.product), '200');
        serialize = (payload) => Buffer.from(json(payload as Record<string, unknown>));
        offerSerializers.set(body.product, serialize);
      }
      // Typed as returning a string, but Fastify sends a serialiser's Buffer as it is.
      reply.serializer(serialize as unknown as (payload: unknown) => string);
      reply.type('application/json; charset=utf-8');
      return offers;
    },
  );
  app.post(
    '/v1/create-order',
    { schema: { ...doc('Create a draft order'), ...routes.createOrder } },
    async (req) => createOrder(svc, req.partner, req.body as CreateOrderInput),
  );
  app.post(
    '/v1/confirm-order',
    { schema: { ...doc('Record the customer payment of a draft'), ...routes.confirmOrder } },
    async (req) => {
      const body = req.body as { id: string; payment: PaymentInput };
      return confirmOrder(svc, req.partner, body.id, body.payment);
    },
  );
  app.post('/v1/get-order', { schema: { ...doc('Read an order'), ...routes.getOrder } }, async (req) =>
    getOrder(svc, req.partner, (req.body as { id: string }).id),
  );
  await walletRoutes(app, svc);
}

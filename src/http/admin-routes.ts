import { timingSafeEqual } from 'node:crypto';
import { Type } from '@sinclair/typebox';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { creditPartnerWallet } from '../app/admin/credit-wallet.ts';
import { listOrdersForOperator, orderDetail } from '../app/admin/orders.ts';
import { resendOrderEvent, sendTestEvent } from '../app/deliver-webhook.ts';
import {
  changePartner,
  createPartner,
  getPartner,
  retireOldSecrets,
  rotateSecret,
} from '../app/admin/partners.ts';
import type { Services } from '../app/services.ts';
import { tokenHash } from '../secrets/secret-box.ts';
import { isoLocal } from '../domain/time.ts';
import { adminWalletRoutes } from './admin-wallet-routes.ts';
import { reasonBody, sendError } from './errors.ts';
import { parseJsonBody } from './raw-body.ts';
import {
  Clock,
  CreatedPartner,
  Delivery,
  Id,
  NewSecret,
  OrderDetail,
  OrderList,
  Partner,
  RetiredSecrets,
  WebhookEvents,
  WebhookUrl,
} from './admin-schemas.ts';
import { OperatorBody } from './schemas.ts';
import { errorResponses, exactly, Nullable, type App } from './typed.ts';
import { Balance } from './wallet-routes.ts';

// Tokens are compared as their SHA-256 (the form the sandbox token is stored in), in constant time:
// equal lengths whatever was sent, and no early exit on the first differing byte.
const digest = (s: string) => Buffer.from(tokenHash(s), 'hex');

/**
 * The operator API under /admin, behind `Authorization: Bearer <ADMIN_TOKEN>`. A partner
 * signature never opens it (and the admin token never opens /v1).
 */
export async function adminRoutes(app: App, svc: Services, adminToken: string): Promise<void> {
  const expected = digest(adminToken);
  app.addHook('onRequest', async (req: FastifyRequest, reply: FastifyReply) => {
    const m = /^Bearer (.+)$/.exec(req.headers.authorization ?? '');
    if (!m)
      return sendError(reply, { statusCode: 401, error: 'Unauthorized', message: 'Missing Bearer token' });
    if (!timingSafeEqual(digest(m[1]!), expected)) {
      return sendError(reply, { statusCode: 403, error: 'Forbidden', message: 'Invalid admin token' });
    }
  });
  app.addHook('preValidation', parseJsonBody);

  const tags = ['operator'];
  const doc = (summary: string, operationId: string) => ({ tags, summary, operationId });
  // null: the service's RATE_LIMIT_PER_MINUTE.
  const RateLimit = Nullable(Type.Integer({ minimum: 1, maximum: 1_000_000 }));

  app.post(
    '/admin/partners',
    {
      schema: {
        ...doc('Create a partner; its secret is shown only here', 'createPartner'),
        body: OperatorBody({
          name: Type.String({ minLength: 1, maxLength: 200 }),
          webhook_url: Type.Optional(WebhookUrl),
          webhook_events: Type.Optional(WebhookEvents),
          wallet: Type.Optional(Type.Boolean()),
          margin_bp: Type.Optional(Type.Integer({ minimum: 0, maximum: 10000 })),
          rate_limit_per_minute: Type.Optional(RateLimit),
        }),
        response: { 201: CreatedPartner, ...errorResponses },
      },
    },
    async (req, reply) => reply.code(201).send(exactly(CreatedPartner, await createPartner(svc, req.body))),
  );

  const partner = { 200: Partner, ...errorResponses };
  const read = { ...doc('Read a partner', 'getPartner'), params: Id, response: partner };
  app.get('/admin/partners/:id', { schema: read }, async (req) =>
    exactly(Partner, await getPartner(svc, req.params.id)),
  );

  app.patch(
    '/admin/partners/:id',
    {
      schema: {
        ...doc('Change a partner', 'changePartner'),
        params: Id,
        body: OperatorBody({
          name: Type.Optional(Type.String({ minLength: 1, maxLength: 200 })),
          webhook_url: Type.Optional(WebhookUrl),
          webhook_events: Type.Optional(WebhookEvents),
          disabled: Type.Optional(Type.Boolean()),
          margin_bp: Type.Optional(Type.Integer({ minimum: 0, maximum: 10000 })),
          rate_limit_per_minute: Type.Optional(RateLimit),
        }),
        response: partner,
      },
    },
    async (req) => exactly(Partner, await changePartner(svc, req.params.id, req.body)),
  );

  const rotate = {
    ...doc('Issue a new secret; the old stays valid', 'rotatePartnerSecret'),
    params: Id,
    response: { 201: NewSecret, ...errorResponses },
  };
  app.post('/admin/partners/:id/secrets', { schema: rotate }, async (req, reply) =>
    reply.code(201).send(exactly(NewSecret, await rotateSecret(svc, req.params.id))),
  );
  const retire = {
    ...doc('Retire the old partner secrets', 'retireOldPartnerSecrets'),
    params: Id,
    response: { 200: RetiredSecrets, ...errorResponses },
  };
  app.delete('/admin/partners/:id/secrets/old', { schema: retire }, async (req) =>
    exactly(RetiredSecrets, await retireOldSecrets(svc, req.params.id)),
  );

  app.post(
    '/admin/partners/:id/wallet/credits',
    {
      schema: {
        ...doc('Credit a partner wallet', 'creditPartnerWallet'),
        params: Id,
        body: OperatorBody({
          wallet: Type.Union([Type.Literal('online'), Type.Literal('promo'), Type.Literal('insurance')]),
          amount: Type.Number(),
          reference: Type.String({ minLength: 1, maxLength: 200 }),
        }),
        response: { 200: Balance, ...errorResponses },
      },
    },
    async (req) =>
      exactly(
        Balance,
        await creditPartnerWallet(svc, { partnerId: req.params.id, ...req.body, actor: 'operator' }),
      ),
  );

  app.get(
    '/admin/orders',
    {
      schema: {
        ...doc('List orders, newest first', 'listOrders'),
        querystring: Type.Object({
          partner_id: Type.Optional(Type.String()),
          status: Type.Optional(Type.String()),
          // Query strings are text and the service validates without type coercion: a pattern, then a number.
          limit: Type.Optional(
            Type.String({ pattern: '^(?:[1-9][0-9]?|[1-4][0-9]{2}|500)$', description: '1 to 500' }),
          ),
          cursor: Type.Optional(Type.String()),
        }),
        response: { 200: OrderList, ...errorResponses },
      },
    },
    async (req) => {
      const { limit, ...q } = req.query;
      const list = await listOrdersForOperator(svc, { ...q, ...(limit ? { limit: Number(limit) } : {}) });
      return exactly(OrderList, list);
    },
  );

  const detail = {
    ...doc('Read an order in full', 'getOrderDetail'),
    params: Id,
    response: { 200: OrderDetail, ...errorResponses },
  };
  app.get('/admin/orders/:id', { schema: detail }, async (req) =>
    exactly(OrderDetail, await orderDetail(svc, req.params.id)),
  );
  const delivery = { 200: Delivery, ...errorResponses };
  const resend = {
    ...doc('Re-send the order’s webhook event', 'resendOrderWebhook'),
    params: Id,
    response: delivery,
  };
  app.post('/admin/orders/:id/webhook', { schema: resend }, async (req) =>
    exactly(Delivery, await resendOrderEvent(svc, req.params.id)),
  );
  const test = {
    ...doc('Send a test event to the partner’s webhook', 'sendWebhookTest'),
    params: Id,
    response: delivery,
  };
  app.post('/admin/partners/:id/webhook-test', { schema: test }, async (req) =>
    exactly(Delivery, await sendTestEvent(svc, req.params.id)),
  );
  await adminWalletRoutes(app, svc);

  if (svc.config.sandbox) {
    const clockView = async () => exactly(Clock, { now: isoLocal(await svc.clock.now()) });
    const clock = { 200: Clock, ...errorResponses };
    const read = { ...doc('Read the sandbox clock', 'getSandboxClock'), response: clock };
    app.get('/admin/sandbox/clock', { schema: read }, clockView);
    app.put(
      '/admin/sandbox/clock',
      {
        schema: {
          ...doc('Set the sandbox clock', 'setSandboxClock'),
          body: OperatorBody({ now: Type.String({ minLength: 1 }) }),
          response: clock,
        },
      },
      async (req, reply) => {
        const text = req.body.now;
        const ms = Date.parse(text);
        if (Number.isNaN(ms) || !/[zZ]|[+-]\d{2}:?\d{2}$/.test(text)) {
          return sendError(
            reply,
            reasonBody(
              400,
              'now must be an ISO-8601 date-time with an offset, e.g. 2026-09-30T12:00:00+03:00',
            ),
          );
        }
        await svc.clock.set(ms);
        return clockView();
      },
    );
    const reset = { ...doc('Back to real time', 'resetSandboxClock'), response: clock };
    app.delete('/admin/sandbox/clock', { schema: reset }, async () => {
      await svc.clock.reset();
      return clockView();
    });
  }
}

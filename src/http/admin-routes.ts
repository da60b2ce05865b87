import { Type } from '@sinclair/typebox';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { creditPartnerWallet } from '../app/admin/credit-wallet.ts';
import { ledgerCsv, listPartners, partnerWallet } from '../app/admin/directory.ts';
import { asActor, auditLog, authenticateOperator, supportMay, type Actor } from '../app/admin/operators.ts';
import { resetSandboxClock, setSandboxClock } from '../app/admin/settings.ts';
import { listOrdersForOperator, orderDetail } from '../app/admin/orders.ts';
import { resendOrderEvent, sendTestEvent } from '../app/deliver-webhook.ts';
import * as partners from '../app/admin/partners.ts';
import { inviteUser } from '../app/portal/invite-user.ts';
import { PORTAL_ROLES } from '../app/portal/roles.ts';
import type { Services } from '../app/services.ts';
import { isoLocal } from '../domain/time.ts';
import { adminWalletRoutes } from './admin-wallet-routes.ts';
import { reasonBody, sendError } from './errors.ts';
import { parseJsonBody } from './raw-body.ts';
import { refuseOverLimit, type OperatorAuthFailures } from './operator-auth-failures.ts';
import {
  AuditPage,
  Clock,
  CreatedPartner,
  Page,
  pageOf,
  PartnerList,
  PartnerWallet,
  PartnerWalletResponse,
  PortalInvitation,
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

/**
 * The operator API under /admin, behind `Authorization: Bearer <token>`: the service's admin token
 * or an operator's (role admin: everything; support: reading, re-sending webhooks). A partner
 * signature never opens it (and no operator token opens /v1). Every handler runs as its operator,
 * so the use cases' audit entries say who acted, through the API.
 */
export async function adminRoutes(
  app: App,
  svc: Services,
  adminToken: string,
  failures: OperatorAuthFailures,
): Promise<void> {
  const operators = new WeakMap<FastifyRequest, Omit<Actor, 'via'>>();
  app.addHook('onRequest', async (req: FastifyRequest, reply: FastifyReply) => {
    const m = /^Bearer (.+)$/.exec(req.headers.authorization ?? '');
    if (!m)
      return sendError(reply, { statusCode: 401, error: 'Unauthorized', message: 'Missing Bearer token' });
    const operator = await authenticateOperator(svc, m[1]!, adminToken);
    if (!operator) {
      const limited = await failures(req, 'api');
      if (limited) return refuseOverLimit(reply, limited.retryAfter);
      return sendError(reply, { statusCode: 403, error: 'Forbidden', message: 'Invalid admin token' });
    }
    const path = req.url.split('?')[0]!;
    if (operator.role === 'support' && !supportMay(req.method, path)) {
      return sendError(
        reply,
        reasonBody(403, `The support role cannot ${req.method} ${path}: it reads, and re-sends webhooks`),
      );
    }
    operators.set(req, operator);
  });
  app.addHook('onRoute', (route) => {
    const handler = route.handler;
    route.handler = function (req, reply) {
      const operator = operators.get(req)!;
      return asActor({ ...operator, via: 'api' }, () => handler.call(this, req, reply));
    };
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
          require_timestamped_signature: Type.Optional(Type.Boolean()),
        }),
        response: { 201: CreatedPartner, ...errorResponses },
      },
    },
    async (req, reply) =>
      reply.code(201).send(exactly(CreatedPartner, await partners.createPartner(svc, req.body))),
  );

  const partner = { 200: Partner, ...errorResponses };
  const read = { ...doc('Read a partner', 'getPartner'), params: Id, response: partner };
  app.get('/admin/partners/:id', { schema: read }, async (req) =>
    exactly(Partner, await partners.getPartner(svc, req.params.id)),
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
          require_timestamped_signature: Type.Optional(Type.Boolean()),
        }),
        response: partner,
      },
    },
    async (req) => exactly(Partner, await partners.changePartner(svc, req.params.id, req.body)),
  );

  const rotate = {
    ...doc('Issue a new secret; the old stays valid 24 h or until retired', 'rotatePartnerSecret'),
    params: Id,
    response: { 201: NewSecret, ...errorResponses },
  };
  app.post('/admin/partners/:id/secrets', { schema: rotate }, async (req, reply) =>
    reply.code(201).send(exactly(NewSecret, await partners.rotateSecret(svc, req.params.id))),
  );
  const retire = {
    ...doc('Retire the old partner secrets', 'retireOldPartnerSecrets'),
    params: Id,
    response: { 200: RetiredSecrets, ...errorResponses },
  };
  app.delete('/admin/partners/:id/secrets/old', { schema: retire }, async (req) =>
    exactly(RetiredSecrets, await partners.retireOldSecrets(svc, req.params.id)),
  );

  app.post(
    '/admin/partners/:id/users',
    {
      schema: {
        ...doc('Invite a portal user of the partner; the link is shown only here', 'invitePortalUser'),
        params: Id,
        body: OperatorBody({
          email: Type.String({ minLength: 3, maxLength: 254 }),
          role: Type.Union(PORTAL_ROLES.map((r) => Type.Literal(r))),
        }),
        response: { 201: PortalInvitation, ...errorResponses },
      },
    },
    async (req, reply) =>
      reply.code(201).send(exactly(PortalInvitation, await inviteUser(svc, req.params.id, req.body))),
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
          q: Type.Optional(
            Type.String({
              maxLength: 100,
              description: 'An order id, a partner id, a plate or vehicle certificate, or a phone',
            }),
          ),
          partner_id: Type.Optional(Type.String()),
          status: Type.Optional(Type.String()),
          product: Type.Optional(Type.String()),
          from: Type.Optional(Type.String({ description: 'Created on or after this day, yyyy-mm-dd' })),
          to: Type.Optional(Type.String({ description: 'Created on or before this day, yyyy-mm-dd' })),
          ...Page,
        }),
        response: { 200: OrderList, ...errorResponses },
      },
    },
    async (req) => exactly(OrderList, await listOrdersForOperator(svc, pageOf(req.query))),
  );

  app.get(
    '/admin/partners',
    {
      schema: {
        ...doc('List and search partners', 'listPartners'),
        querystring: Type.Object({
          q: Type.Optional(Type.String({ maxLength: 100, description: 'Part of a name, or an id’s start' })),
          ...Page,
        }),
        response: { 200: PartnerList, ...errorResponses },
      },
    },
    async (req) => exactly(PartnerList, await listPartners(svc, pageOf(req.query))),
  );

  app.get(
    '/admin/partners/:id/wallet',
    {
      schema: {
        ...doc('A partner’s balances and ledger (JSON or CSV)', 'getPartnerWallet'),
        params: Id,
        querystring: Type.Object({
          format: Type.Optional(Type.Union([Type.Literal('json'), Type.Literal('csv')])),
          ...Page,
        }),
        response: { 200: PartnerWalletResponse, ...errorResponses },
      },
    },
    async (req, reply) => {
      const { format, ...page } = req.query;
      const wallet = exactly(PartnerWallet, await partnerWallet(svc, req.params.id, pageOf(page)));
      if (format !== 'csv') return wallet;
      return reply
        .type('text/csv; charset=utf-8')
        .header('content-disposition', `attachment; filename="ledger-${req.params.id}.csv"`)
        .send(ledgerCsv(wallet));
    },
  );

  app.get(
    '/admin/audit',
    {
      schema: {
        ...doc('The audit log of operator actions, newest first', 'getAuditLog'),
        querystring: Type.Object({
          actor: Type.Optional(Type.String({ maxLength: 100 })),
          target: Type.Optional(Type.String({ maxLength: 100 })),
          ...Page,
        }),
        response: { 200: AuditPage, ...errorResponses },
      },
    },
    async (req) => exactly(AuditPage, await auditLog(svc, pageOf(req.query))),
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
        return exactly(Clock, await setSandboxClock(svc, ms));
      },
    );
    const reset = { ...doc('Back to real time', 'resetSandboxClock'), response: clock };
    app.delete('/admin/sandbox/clock', { schema: reset }, async () =>
      exactly(Clock, await resetSandboxClock(svc)),
    );
  }
}

import { Type, type TProperties } from '@sinclair/typebox';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { creditAmountBani, creditPartnerWallet } from '../app/admin/credit-wallet.ts';
import { ledgerCsv, listPartners, partnerWallet } from '../app/admin/directory.ts';
import { operatorActor, type OperatorActor } from '../app/actor.ts';
import { auditLog, authenticateOperator } from '../app/admin/operators.ts';
import { resetSandboxClock, setSandboxClock } from '../app/admin/settings.ts';
import { listOrdersForOperator, orderDetail } from '../app/admin/orders.ts';
import { resendOrderEvent, sendTestEvent } from '../app/deliver-webhook.ts';
import * as partners from '../app/admin/partners.ts';
import { inviteUser } from '../app/portal/invite-user.ts';
import { passwordLink } from '../app/portal/password-link.ts';
import { PORTAL_ROLES } from '../app/portal/roles.ts';
import type { Services } from '../app/services.ts';
import { isoLocal } from '../domain/time.ts';
import { SUB_WALLETS } from '../domain/wallet.ts';
import { adminWalletRoutes } from './admin-wallet-routes.ts';
import { reasonBody, sendError } from './errors.ts';
import { refuseOverLimit, type OperatorAuthFailures } from './operator-auth-failures.ts';
import { operatorMay, ROLE_SCOPE } from './operator-roles.ts';
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
  RenewalNoticeDays,
  WebhookEvents,
  WebhookUrl,
} from './admin-schemas.ts';
import { OperatorBody } from './schemas.ts';
import { errorResponses, exactly, Nullable, type App } from './typed.ts';
import { Balance } from './wallet-routes.ts';

/**
 * The operator API under /admin, behind `Authorization: Bearer <token>`: the service's admin token
 * or an operator's (role admin: everything; support: reading, re-sending webhooks). A partner
 * signature never opens it (and no operator token opens /v1). What each role may call is
 * OPERATOR_WRITES (./operator-roles.ts); every use case that changes something is handed the
 * operator (`by(req)`), so its audit entry says who acted, through the API.
 */
export async function adminRoutes(
  app: App,
  svc: Services,
  adminToken: string,
  failures: OperatorAuthFailures,
): Promise<void> {
  const operators = new WeakMap<FastifyRequest, OperatorActor>();
  /** The operator of a request, whom onRequest let through. */
  const by = (req: FastifyRequest): OperatorActor => operators.get(req)!;
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
    if (!operatorMay(operator.role, req.method, req.routeOptions.url)) {
      return sendError(
        reply,
        reasonBody(
          403,
          `The ${operator.role} role cannot ${req.method} ${path}: ${ROLE_SCOPE[operator.role]}`,
        ),
      );
    }
    operators.set(req, operatorActor(operator, 'api'));
  });

  const tags = ['operator'];
  const doc = (summary: string, operationId: string) => ({ tags, summary, operationId });
  /** A paged list's schema: its filters and `Page` in the query string, `response` its 200 answer. */
  const paged = <F extends TProperties, R>(about: ReturnType<typeof doc>, filters: F, response: R) => ({
    ...about,
    querystring: Type.Object({ ...filters, ...Page }),
    response: { 200: response, ...errorResponses },
  });
  /** The schema of an operator's request on one partner: its id in the path, `fields` the body. */
  const onPartner = <F extends TProperties, R>(about: ReturnType<typeof doc>, fields: F, response: R) => ({
    ...about,
    params: Id,
    body: OperatorBody(fields),
    response,
  });
  // A partner's settings, the same when an operator creates the partner and changes it; only creating
  // it requires the name.
  const PartnerName = Type.String({ minLength: 1, maxLength: 200 });
  const webhook = { webhook_url: Type.Optional(WebhookUrl), webhook_events: Type.Optional(WebhookEvents) };
  const terms = {
    margin_bp: Type.Optional(Type.Integer({ minimum: 0, maximum: 10000 })),
    // null: the service's RATE_LIMIT_PER_MINUTE.
    rate_limit_per_minute: Type.Optional(Nullable(Type.Integer({ minimum: 1, maximum: 1_000_000 }))),
    require_timestamped_signature: Type.Optional(Type.Boolean()),
    renewal_notice_days: Type.Optional(RenewalNoticeDays),
  };

  app.post(
    '/admin/partners',
    {
      schema: {
        ...doc('Create a partner; its secret is shown only here', 'createPartner'),
        body: OperatorBody({
          name: PartnerName,
          ...webhook,
          wallet: Type.Optional(Type.Boolean()),
          ...terms,
        }),
        response: { 201: CreatedPartner, ...errorResponses },
      },
    },
    async (req, reply) =>
      reply.code(201).send(exactly(CreatedPartner, await partners.createPartner(svc, by(req), req.body))),
  );

  const partner = { 200: Partner, ...errorResponses };
  const read = { ...doc('Read a partner', 'getPartner'), params: Id, response: partner };
  app.get('/admin/partners/:id', { schema: read }, async (req) =>
    exactly(Partner, await partners.getPartner(svc, req.params.id)),
  );

  const change = onPartner(
    doc('Change a partner', 'changePartner'),
    { name: Type.Optional(PartnerName), ...webhook, disabled: Type.Optional(Type.Boolean()), ...terms },
    partner,
  );
  app.patch('/admin/partners/:id', { schema: change }, async (req) =>
    exactly(Partner, await partners.changePartner(svc, by(req), req.params.id, req.body)),
  );

  const rotate = {
    ...doc('Issue a new secret; the old stays valid 24 h or until retired', 'rotatePartnerSecret'),
    params: Id,
    response: { 201: NewSecret, ...errorResponses },
  };
  app.post('/admin/partners/:id/secrets', { schema: rotate }, async (req, reply) =>
    reply.code(201).send(exactly(NewSecret, await partners.rotateSecret(svc, by(req), req.params.id))),
  );
  const retire = {
    ...doc('Retire the old partner secrets', 'retireOldPartnerSecrets'),
    params: Id,
    response: { 200: RetiredSecrets, ...errorResponses },
  };
  app.delete('/admin/partners/:id/secrets/old', { schema: retire }, async (req) =>
    exactly(RetiredSecrets, await partners.retireOldSecrets(svc, by(req), req.params.id)),
  );

  const invite = onPartner(
    doc('Invite a portal user of the partner; the link is shown only here', 'invitePortalUser'),
    {
      email: Type.String({ minLength: 3, maxLength: 254 }),
      role: Type.Union(PORTAL_ROLES.map((r) => Type.Literal(r))),
    },
    { 201: PortalInvitation, ...errorResponses },
  );
  app.post('/admin/partners/:id/users', { schema: invite }, async (req, reply) =>
    reply.code(201).send(exactly(PortalInvitation, await inviteUser(svc, by(req), req.params.id, req.body))),
  );
  // A new set-password link for a portal user (decision 0086), shown only here.
  app.post(
    '/admin/partners/:id/users/:userId/password-link',
    {
      schema: {
        ...doc(
          'A new set-password link for a portal user; the link is shown only here',
          'portalPasswordLink',
        ),
        params: Type.Object({
          id: Type.String({ minLength: 1, maxLength: 64 }),
          userId: Type.String({ minLength: 1, maxLength: 64 }),
        }),
        response: { 201: PortalInvitation, ...errorResponses },
      },
    },
    async (req, reply) =>
      reply
        .code(201)
        .send(exactly(PortalInvitation, await passwordLink(svc, by(req), req.params.id, req.params.userId))),
  );

  const credit = onPartner(
    doc('Credit a partner wallet', 'creditPartnerWallet'),
    {
      wallet: Type.Union(SUB_WALLETS.map((w) => Type.Literal(w))),
      amount: Type.Number(),
      reference: Type.String({ minLength: 1, maxLength: 200 }),
    },
    { 200: Balance, ...errorResponses },
  );
  app.post('/admin/partners/:id/wallet/credits', { schema: credit }, async (req) =>
    exactly(
      Balance,
      await creditPartnerWallet(svc, by(req), {
        partnerId: req.params.id,
        wallet: req.body.wallet,
        amountBani: creditAmountBani(req.body.amount),
        reference: req.body.reference,
        actor: 'operator',
      }),
    ),
  );

  const orderList = paged(
    doc('List orders, newest first', 'listOrders'),
    {
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
    },
    OrderList,
  );
  app.get('/admin/orders', { schema: orderList }, async (req) =>
    exactly(OrderList, await listOrdersForOperator(svc, pageOf(req.query))),
  );

  const partnerList = paged(
    doc('List and search partners', 'listPartners'),
    { q: Type.Optional(Type.String({ maxLength: 100, description: 'Part of a name, or an id’s start' })) },
    PartnerList,
  );
  app.get('/admin/partners', { schema: partnerList }, async (req) =>
    exactly(PartnerList, await listPartners(svc, pageOf(req.query))),
  );

  const balances = {
    ...paged(
      doc('A partner’s balances and ledger (JSON or CSV)', 'getPartnerWallet'),
      { format: Type.Optional(Type.Union([Type.Literal('json'), Type.Literal('csv')])) },
      PartnerWalletResponse,
    ),
    params: Id,
  };
  app.get('/admin/partners/:id/wallet', { schema: balances }, async (req, reply) => {
    const { format, ...page } = req.query;
    const wallet = exactly(PartnerWallet, await partnerWallet(svc, req.params.id, pageOf(page)));
    if (format !== 'csv') return wallet;
    return reply
      .type('text/csv; charset=utf-8')
      .header('content-disposition', `attachment; filename="ledger-${req.params.id}.csv"`)
      .send(ledgerCsv(wallet));
  });

  const audit = paged(
    doc('The audit log of operator actions, newest first', 'getAuditLog'),
    {
      actor: Type.Optional(Type.String({ maxLength: 100 })),
      target: Type.Optional(Type.String({ maxLength: 100 })),
    },
    AuditPage,
  );
  app.get('/admin/audit', { schema: audit }, async (req) =>
    exactly(AuditPage, await auditLog(svc, pageOf(req.query))),
  );

  const detail = {
    ...doc('Read an order in full', 'getOrderDetail'),
    params: Id,
    response: { 200: OrderDetail, ...errorResponses },
  };
  app.get('/admin/orders/:id', { schema: detail }, async (req) =>
    exactly(OrderDetail, await orderDetail(svc, req.params.id)),
  );
  // Both send one webhook delivery now and answer it.
  const send = { params: Id, response: { 200: Delivery, ...errorResponses } };
  const resend = { ...doc('Re-send the order’s webhook event', 'resendOrderWebhook'), ...send };
  app.post('/admin/orders/:id/webhook', { schema: resend }, async (req) =>
    exactly(Delivery, await resendOrderEvent(svc, by(req), req.params.id)),
  );
  const test = { ...doc('Send a test event to the partner’s webhook', 'sendWebhookTest'), ...send };
  app.post('/admin/partners/:id/webhook-test', { schema: test }, async (req) =>
    exactly(Delivery, await sendTestEvent(svc, by(req), req.params.id)),
  );
  await adminWalletRoutes(app, svc, by);

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
        return exactly(Clock, await setSandboxClock(svc, by(req), ms));
      },
    );
    const reset = { ...doc('Back to real time', 'resetSandboxClock'), response: clock };
    app.delete('/admin/sandbox/clock', { schema: reset }, async (req) =>
      exactly(Clock, await resetSandboxClock(svc, by(req))),
    );
  }
}

import { Type } from '@sinclair/typebox';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { creditPartnerWallet } from '../app/admin/credit-wallet.ts';
import { ledgerCsv, listPartners, partnerWallet } from '../app/admin/directory.ts';
import * as partners from '../app/admin/partners.ts';
import { sendTestEvent } from '../app/deliver-webhook.ts';
import { inviteUser } from '../app/portal/invite-user.ts';
import { passwordLinkByEmail } from '../app/portal/password-link.ts';
import { PORTAL_ROLES } from '../app/portal/roles.ts';
import type { Services } from '../app/services.ts';
import { badRequest, DomainError } from '../domain/errors.ts';
import { mdlTextToBani } from '../domain/money.ts';
import { WEBHOOK_EVENT_TYPES, type WebhookEventType } from '../domain/order-state.ts';
import { SUB_WALLETS } from '../domain/wallet.ts';
import type { OperatorWrite } from '../http/operator-roles.ts';
import type { App } from '../http/typed.ts';
import { isRecord } from '../http/pages.ts';
import {
  act,
  by,
  given,
  Id,
  listPage,
  queryOf,
  refusal,
  requireRole,
  Text,
  type Render,
  unlessRefused,
} from './web.ts';

/** A group of checkboxes: absent, one value, or several. */
const Checks = Type.Optional(
  Type.Union([Type.String({ maxLength: 20 }), Type.Array(Type.String({ maxLength: 20 }), { maxItems: 10 })]),
);
const Csrf = { _csrf: Text() };
const PAGE = 25;
const LEDGER_PAGE = 20;

/** The webhook events ticked in a form; `completed` is always sent, so always in the list. */
function eventsOf(v: string | string[] | undefined): WebhookEventType[] {
  const ticked = new Set(typeof v === 'string' ? [v] : (v ?? []));
  return WEBHOOK_EVENT_TYPES.filter((s) => s === 'completed' || ticked.has(s));
}

/** Partners: the list and search, a new partner, and a partner's page with its wallet and settings. */
export async function partnerPages(app: App, svc: Services, render: Render): Promise<void> {
  app.get(
    '/partners',
    { schema: { querystring: Type.Object({ q: Text(), cursor: Text(64), done: Text(40) }) } },
    async (req, reply) => {
      const q = given(req.query.q);
      return listPage(req, reply, render, {
        view: 'partners',
        filters: { q },
        data: { title: 'Partners', nav: 'partners', q: q ?? '' },
        rows: 'partners',
        load: (page) => listPartners(svc, { limit: PAGE, ...(q ? { q } : {}), ...page }),
      });
    },
  );

  const newPartnerForm = { name: '', webhook_url: '', wallet: true, events: ['completed'] as string[] };
  app.get('/partners/new', async (req, reply) =>
    render(req, reply, 'partner-new', {
      title: 'New partner',
      nav: 'partners',
      form: newPartnerForm,
      events: WEBHOOK_EVENT_TYPES,
    }),
  );

  app.post(
    '/partners',
    {
      schema: {
        body: Type.Object({
          ...Csrf,
          name: Text(),
          webhook_url: Text(2048),
          wallet: Text(10),
          events: Checks,
        }),
      },
    },
    async (req, reply) => {
      const b = req.body;
      const form = {
        name: b.name ?? '',
        webhook_url: b.webhook_url ?? '',
        wallet: b.wallet === 'on',
        events: eventsOf(b.events),
      };
      return unlessRefused(
        async () => {
          requireRole(req, 'POST /admin/partners', 'create partners');
          const name = form.name.trim();
          if (!name) throw badRequest('Give the partner a name.');
          const created = await partners.createPartner(svc, by(req), {
            name,
            wallet: form.wallet,
            webhook_events: form.events,
            ...(given(form.webhook_url) ? { webhook_url: form.webhook_url.trim() } : {}),
          });
          // The secret is on this answer only (never in a URL, never stored in clear): no redirect.
          return render(
            req,
            reply,
            'secret',
            {
              title: 'Partner created',
              nav: 'partners',
              heading: `Partner ${created.name} is created`,
              partnerId: created.id,
              secret: created.secret,
            },
            201,
          );
        },
        (r) =>
          render(
            req,
            reply,
            'partner-new',
            { title: 'New partner', nav: 'partners', form, events: WEBHOOK_EVENT_TYPES, error: r.message },
            r.status,
          ),
      );
    },
  );

  const showPartner = async (
    req: FastifyRequest,
    reply: FastifyReply,
    id: string,
    extra: Record<string, unknown> = {},
    status = 200,
    cursor?: string,
  ) => {
    const partner = await partners.getPartner(svc, id);
    let wallet: Awaited<ReturnType<typeof partnerWallet>> | null = null;
    if (partner.wallet)
      wallet = await partnerWallet(svc, id, { limit: LEDGER_PAGE, ...(cursor ? { cursor } : {}) });
    const self = `/console/partners/${encodeURIComponent(id)}`;
    return render(
      req,
      reply,
      'partner',
      {
        title: `Partner ${partner.name}`,
        nav: 'partners',
        partner,
        wallet,
        wallets: SUB_WALLETS,
        events: WEBHOOK_EVENT_TYPES,
        isAdmin: req.consoleSession!.actor.role === 'admin',
        olderLedger: wallet?.next_cursor ? `${self}${queryOf({ cursor: wallet.next_cursor })}#ledger` : null,
        newestLedger: cursor ? `${self}#ledger` : null,
        credit: { wallet: 'online', amount: '', reference: '' },
        portalRoles: PORTAL_ROLES,
        invite: { email: '', role: 'owner' },
        ...extra,
      },
      status,
    );
  };

  app.get(
    '/partners/:id',
    { schema: { params: Id, querystring: Type.Object({ cursor: Text(20), done: Text(40) }) } },
    async (req, reply) => showPartner(req, reply, req.params.id, {}, 200, given(req.query.cursor)),
  );

  /** The whole ledger as CSV, a page of the use case at a time, newest entry first. */
  app.get('/partners/:id/ledger.csv', { schema: { params: Id } }, async (req, reply) => {
    const id = req.params.id;
    const first = await partnerWallet(svc, id, { limit: 1000 });
    const ledger = [...first.ledger];
    let cursor = first.next_cursor;
    while (cursor) {
      const page = await partnerWallet(svc, id, { limit: 1000, cursor });
      ledger.push(...page.ledger);
      cursor = page.next_cursor;
    }
    return reply
      .type('text/csv; charset=utf-8')
      .header('content-disposition', `attachment; filename="ledger-${id.replace(/[^a-z0-9_-]/gi, '')}.csv"`)
      .send(ledgerCsv({ ...first, ledger, next_cursor: null }));
  });

  /** A partner action: the role check, the use case, then the partner's page again (or the refusal on it). */
  const action = (
    path: string,
    admin: { write: OperatorWrite; what: string },
    run: (req: FastifyRequest & { body: Record<string, unknown> }, id: string) => Promise<string>,
  ) =>
    app.post(path, { schema: { params: Id } }, async (req, reply) => {
      const id = req.params.id;
      return act(req, reply, {
        as: admin,
        run: () => run(req as FastifyRequest & { body: Record<string, unknown> }, id),
        page: `/console/partners/${encodeURIComponent(id)}`,
        show: (extra, status) => showPartner(req, reply, id, extra, status),
        kept: formEcho(req.body),
      });
    });

  action(
    '/partners/:id/credit',
    { write: 'POST /admin/partners/:id/wallet/credits', what: 'credit wallets' },
    async (req, id) => {
      const b = strings(req.body, ['wallet', 'amount', 'reference']);
      const wallet = SUB_WALLETS.find((w) => w === b.wallet);
      if (!wallet) throw badRequest(`Wallet must be one of ${SUB_WALLETS.join(', ')}`);
      // Read as decimal text, never through a float (decision 0048).
      const bani = mdlTextToBani(b.amount.trim().replace(',', '.'));
      if (bani === null) throw badRequest('Amount must be a number of MDL, like 250 or 99.50');
      const reference = b.reference.trim();
      if (!reference || reference.length > 200)
        throw badRequest('Reference must be 1 to 200 characters (a transfer’s number, say)');
      await creditPartnerWallet(svc, by(req), {
        partnerId: id,
        wallet,
        amountBani: bani,
        reference,
        actor: `console:${by(req).id}`,
      });
      return 'credited';
    },
  );

  action(
    '/partners/:id/webhook',
    { write: 'PATCH /admin/partners/:id', what: 'change partners' },
    async (req, id) => {
      const fields = strings(req.body, ['webhook_url', 'renewal_notice_days']);
      const url = fields.webhook_url.trim();
      if (url.length > 2048) throw badRequest('The webhook URL is longer than 2048 characters');
      const days = fields.renewal_notice_days.trim();
      if (days && !/^\d{1,3}$/.test(days)) {
        throw badRequest('renewal_notice_days must be a whole number of days from 0 (no notice) to 365');
      }
      const events = req.body.events;
      await partners.changePartner(svc, by(req), id, {
        ...(days ? { renewal_notice_days: Number(days) } : {}),
        webhook_url: url || null,
        webhook_events: eventsOf(
          typeof events === 'string' || Array.isArray(events) ? (events as string | string[]) : undefined,
        ),
      });
      return 'webhook-saved';
    },
  );

  action(
    '/partners/:id/webhook-test',
    { write: 'POST /admin/partners/:id/webhook-test', what: 'send test events' },
    async (req, id) => ((await sendTestEvent(svc, by(req), id)).delivered ? 'test-delivered' : 'test-failed'),
  );

  // A partner's switches, each a change of the operator API's PATCH and the notice it earns.
  const switches = [
    { verb: 'disable', what: 'disable partners', change: { disabled: true }, done: 'disabled' },
    { verb: 'enable', what: 'enable partners', change: { disabled: false }, done: 'enabled' },
    // Decision 0045: the switch to timestamped request signatures, and back.
    {
      verb: 'timestamped-required',
      what: 'change partners',
      change: { require_timestamped_signature: true },
      done: 'timestamped-required',
    },
    {
      verb: 'timestamped-optional',
      what: 'change partners',
      change: { require_timestamped_signature: false },
      done: 'timestamped-optional',
    },
  ];
  for (const { verb, what, change, done } of switches) {
    action(`/partners/:id/${verb}`, { write: 'PATCH /admin/partners/:id', what }, async (req, id) => {
      await partners.changePartner(svc, by(req), id, change);
      return done;
    });
  }

  action(
    '/partners/:id/secrets/retire',
    { write: 'DELETE /admin/partners/:id/secrets/old', what: 'retire secrets' },
    async (req, id) => {
      await partners.retireOldSecrets(svc, by(req), id);
      return 'retired';
    },
  );

  // A new secret is shown once, on this answer: no redirect.
  app.post('/partners/:id/secrets', { schema: { params: Id } }, async (req, reply) => {
    const id = req.params.id;
    try {
      requireRole(req, 'POST /admin/partners/:id/secrets', 'rotate secrets');
      const partner = await partners.getPartner(svc, id);
      const { secret } = await partners.rotateSecret(svc, by(req), id);
      return render(
        req,
        reply,
        'secret',
        {
          title: 'New secret',
          nav: 'partners',
          heading: `A new secret for ${partner.name}`,
          partnerId: id,
          secret,
          rotated: true,
        },
        201,
      );
    } catch (e) {
      if (!(e instanceof DomainError)) throw e;
      const r = refusal(e)!;
      return showPartner(req, reply, id, { error: r.message }, r.status);
    }
  });
  // A new set-password link for a user who forgot the password (decision 0086): shown once, here.
  app.post(
    '/partners/:id/users/password-link',
    { schema: { params: Id, body: Type.Object({ ...Csrf, email: Text(254) }) } },
    async (req, reply) => {
      const id = req.params.id;
      try {
        requireRole(req, 'POST /admin/partners/:id/users/:userId/password-link', 'send set-password links');
        const partner = await partners.getPartner(svc, id);
        const invitation = await passwordLinkByEmail(svc, by(req), id, req.body.email ?? '');
        return render(
          req,
          reply,
          'invitation',
          {
            title: 'Set-password link',
            nav: 'partners',
            partnerId: id,
            partnerName: partner.name,
            invitation,
            reset: true,
          },
          201,
        );
      } catch (e) {
        if (!(e instanceof DomainError)) throw e;
        const r = refusal(e)!;
        return showPartner(
          req,
          reply,
          id,
          { error: r.message, reset: { email: req.body.email ?? '' } },
          r.status,
        );
      }
    },
  );
  // A portal invitation's link is shown once, on this answer: no redirect, never in a URL or a log.
  app.post(
    '/partners/:id/users',
    { schema: { params: Id, body: Type.Object({ ...Csrf, email: Text(254), role: Text(20) }) } },
    async (req, reply) => {
      const id = req.params.id;
      try {
        requireRole(req, 'POST /admin/partners/:id/users', 'invite portal users');
        const partner = await partners.getPartner(svc, id);
        const invitation = await inviteUser(svc, by(req), id, {
          email: req.body.email ?? '',
          role: req.body.role ?? '',
        });
        return render(
          req,
          reply,
          'invitation',
          {
            title: 'Portal invitation',
            nav: 'partners',
            partnerId: id,
            partnerName: partner.name,
            invitation,
          },
          201,
        );
      } catch (e) {
        if (!(e instanceof DomainError)) throw e;
        const r = refusal(e)!;
        const kept = { invite: { email: req.body.email ?? '', role: req.body.role ?? '' } };
        return showPartner(req, reply, id, { error: r.message, ...kept }, r.status);
      }
    },
  );
}

/** The named form fields as strings ('' when absent or not a string). */
function strings<K extends string>(body: unknown, keys: K[]): Record<K, string> {
  const out: Partial<Record<K, string>> = {};
  for (const k of keys) {
    const v = isRecord(body) ? body[k] : undefined;
    out[k] = typeof v === 'string' ? v : '';
  }
  return out as Record<K, string>;
}

/** A refused credit keeps what was typed, so the operator corrects it rather than typing it again. */
function formEcho(body: unknown) {
  const b = strings(body, ['wallet', 'amount', 'reference']);
  return b.amount || b.reference
    ? { credit: { wallet: b.wallet || 'online', amount: b.amount, reference: b.reference } }
    : {};
}

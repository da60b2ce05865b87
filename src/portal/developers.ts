import { Type } from '@sinclair/typebox';
import { readDevelopers } from '../app/portal/read-developers.ts';
import { retireSecret } from '../app/portal/retire-secret.ts';
import { rotateSecret } from '../app/portal/rotate-secret.ts';
import { resendPortalEvent, saveRenewalNotice } from '../app/portal/partner-events.ts';
import { saveWebhook } from '../app/portal/save-webhook.ts';
import { setTimestampedSignatures } from '../app/portal/signature-form.ts';
import { sendTestEvent } from '../app/portal/send-test-event.ts';
import type { Services } from '../app/services.ts';
import { WEBHOOK_EVENT_TYPES } from '../domain/order-state.ts';
import type { App } from '../http/typed.ts';
import { say, stored } from './reasons.ts';
import { showPage, Text, tOf, unlessRefused, userOf, type Render } from './web.ts';

/** A group of checkboxes: absent, one value, or several. */
const Checks = Type.Optional(
  Type.Union([Type.String({ maxLength: 20 }), Type.Array(Type.String({ maxLength: 20 }), { maxItems: 10 })]),
);
const Csrf = { _csrf: Text() };

/** Developers: the partner id, the secret's rotation, the webhook and its last deliveries. */
export async function developerPages(app: App, svc: Services, render: Render): Promise<void> {
  const show = showPage(render, 'developers', async (req) => {
    const dev = await readDevelopers(svc, userOf(req));
    return {
      title: tOf(req)('dev.title'),
      current: 'developers',
      dev,
      events: WEBHOOK_EVENT_TYPES,
      webhook: { url: dev.webhook_url ?? '', events: dev.webhook_events as readonly string[] },
    };
  });

  app.get('/developers', { schema: { querystring: Type.Object({ done: Text(40) }) } }, async (req, reply) =>
    show(req, reply),
  );

  // The new secret is on this answer only (never in a URL, never stored in clear): no redirect.
  app.post('/developers/secrets', { schema: { body: Type.Object(Csrf) } }, async (req, reply) =>
    unlessRefused(
      async () => {
        const user = userOf(req);
        const { secret } = await rotateSecret(svc, user);
        return render(
          req,
          reply,
          'secret',
          { title: tOf(req)('dev.newSecret'), current: 'developers', partnerId: user.partnerId, secret },
          201,
        );
      },
      (r) => show(req, reply, { error: say(tOf(req), r.message) }, r.status),
    ),
  );

  app.post('/developers/secrets/retire', { schema: { body: Type.Object(Csrf) } }, async (req, reply) =>
    unlessRefused(
      async () => {
        await retireSecret(svc, userOf(req));
        return reply.redirect('/portal/developers?done=retired', 303);
      },
      (r) => show(req, reply, { error: say(tOf(req), r.message) }, r.status),
    ),
  );

  app.post(
    '/developers/signatures',
    {
      schema: {
        body: Type.Object({ ...Csrf, require: Type.Union([Type.Literal('true'), Type.Literal('false')]) }),
      },
    },
    async (req, reply) =>
      unlessRefused(
        async () => {
          const required = req.body.require === 'true';
          await setTimestampedSignatures(svc, userOf(req), required);
          const done = required ? 'timestamped-required' : 'timestamped-optional';
          return reply.redirect(`/portal/developers?done=${done}#signatures`, 303);
        },
        (r) => show(req, reply, { error: say(tOf(req), r.message) }, r.status),
      ),
  );

  app.post(
    '/developers/webhook',
    { schema: { body: Type.Object({ ...Csrf, webhook_url: Text(2048), events: Checks }) } },
    async (req, reply) => {
      const url = req.body.webhook_url ?? '';
      const ticked = req.body.events;
      const events = typeof ticked === 'string' ? [ticked] : (ticked ?? []);
      return unlessRefused(
        async () => {
          await saveWebhook(svc, userOf(req), { url, events });
          return reply.redirect('/portal/developers?done=webhook-saved#webhook', 303);
        },
        // What was typed stays in the form, beside the reason.
        (r) =>
          show(req, reply, { webhookError: say(tOf(req), r.message), webhook: { url, events } }, r.status),
      );
    },
  );

  app.post(
    '/developers/renewals',
    {
      schema: {
        body: Type.Object({ ...Csrf, renewal_notice_days: Type.String({ pattern: '^[0-9]{1,3}$' }) }),
      },
    },
    async (req, reply) =>
      unlessRefused(
        async () => {
          await saveRenewalNotice(svc, userOf(req), Number(req.body.renewal_notice_days));
          return reply.redirect('/portal/developers?done=renewals-saved#renewals', 303);
        },
        (r) => show(req, reply, { error: say(tOf(req), r.message) }, r.status),
      ),
  );

  app.post(
    '/developers/events/resend',
    { schema: { body: Type.Object({ ...Csrf, id: Type.String({ minLength: 1, maxLength: 64 }) }) } },
    async (req, reply) =>
      unlessRefused(
        async () => {
          await resendPortalEvent(svc, userOf(req), req.body.id);
          return reply.redirect('/portal/developers?done=event-queued#events', 303);
        },
        (r) => show(req, reply, { error: say(tOf(req), r.message) }, r.status),
      ),
  );

  // The attempt's outcome is shown on this answer (it is not one of the order deliveries below).
  app.post('/developers/webhook-test', { schema: { body: Type.Object(Csrf) } }, async (req, reply) =>
    unlessRefused(
      async () => {
        const test = await sendTestEvent(svc, userOf(req));
        return show(req, reply, {
          test,
          notice: test.delivered ? tOf(req)('dev.testDelivered') : undefined,
          error: test.delivered
            ? undefined
            : tOf(req)('dev.testFailed', { error: stored(tOf(req), test.error ?? '') }),
        });
      },
      (r) => show(req, reply, { error: say(tOf(req), r.message) }, r.status),
    ),
  );
}

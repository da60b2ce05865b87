import { Type } from '@sinclair/typebox';
import { ADMIN_TOKEN_ACTOR, auditLog, listOperators } from '../app/admin/operators.ts';
import { changeSettings, readSettings, resetSandboxClock, setSandboxClock } from '../app/admin/settings.ts';
import type { Services } from '../app/services.ts';
import { badRequest } from '../domain/errors.ts';
import { isoLocal, isValidDate, localInstant } from '../domain/time.ts';
import type { App } from '../http/typed.ts';
import type { OperatorActor } from '../app/actor.ts';
import type { OperatorWrite } from '../http/operator-roles.ts';
import { act, by, givenFields, listPage, showPage, Text, type Render } from './web.ts';

/** Settings (the balance-spending switch, the sandbox clock, the operators) and the audit log. */
export async function settingsPages(app: App, svc: Services, render: Render): Promise<void> {
  const showSettings = showPage(render, 'settings', async (req) => {
    const [settings, operators] = await Promise.all([readSettings(svc), listOperators(svc)]);
    const now = isoLocal(await svc.clock.now());
    return {
      title: 'Settings',
      nav: 'settings',
      settings,
      operators: operators.operators,
      clock: svc.config.sandbox ? { now, local: now.slice(0, 19) } : null,
      isAdmin: req.consoleSession!.actor.role === 'admin',
    };
  });

  app.get('/settings', { schema: { querystring: Type.Object({ done: Text(40) }) } }, async (req, reply) =>
    showSettings(req, reply),
  );

  const action = (
    path: string,
    admin: { write: OperatorWrite; what: string },
    run: (body: Record<string, unknown>, actor: OperatorActor) => Promise<string>,
  ) =>
    app.post(path, async (req, reply) =>
      act(req, reply, {
        as: admin,
        run: () => run((req.body ?? {}) as Record<string, unknown>, by(req)),
        page: '/console/settings',
        show: (extra, status) => showSettings(req, reply, extra, status),
      }),
    );

  action('/settings', { write: 'PUT /admin/settings', what: 'change settings' }, async (body, actor) => {
    await changeSettings(svc, actor, { balance_spending_enabled: body.balance_spending_enabled === 'on' });
    return 'settings-saved';
  });

  action(
    '/settings/clock',
    { write: 'PUT /admin/sandbox/clock', what: 'move the sandbox clock' },
    async (body, actor) => {
      if (!svc.config.sandbox) throw badRequest('The clock can only be moved in the sandbox');
      const text = typeof body.now === 'string' ? body.now.trim() : '';
      // A datetime-local field: the service's local time (Europe/Chisinau), seconds optional.
      const m = /^(\d{4}-\d{2}-\d{2})T(\d{2}:\d{2})(:\d{2})?$/.exec(text);
      if (!m || !isValidDate(m[1]!))
        throw badRequest('Sandbox time must be a date and time, like 2026-09-30T14:00');
      await setSandboxClock(svc, actor, localInstant(m[1]!, `${m[2]}${m[3] ?? ':00'}`));
      return 'clock-set';
    },
  );

  action(
    '/settings/clock/reset',
    { write: 'DELETE /admin/sandbox/clock', what: 'move the sandbox clock' },
    async (_body, actor) => {
      if (!svc.config.sandbox) throw badRequest('The clock can only be moved in the sandbox');
      await resetSandboxClock(svc, actor);
      return 'clock-reset';
    },
  );

  app.get(
    '/audit',
    { schema: { querystring: Type.Object({ actor: Text(100), target: Text(100), cursor: Text(20) }) } },
    async (req, reply) => {
      const filters = givenFields(req.query, ['actor', 'target']);
      const names = new Map<string, string>([[ADMIN_TOKEN_ACTOR.id, ADMIN_TOKEN_ACTOR.name]]);
      for (const op of (await listOperators(svc)).operators) names.set(op.id, op.name);
      return listPage(req, reply, render, {
        view: 'audit',
        filters,
        data: {
          title: 'Audit log',
          nav: 'audit',
          filters: { actor: filters.actor ?? '', target: filters.target ?? '' },
          names,
        },
        rows: 'entries',
        load: (page) => auditLog(svc, { limit: 30, ...filters, ...page }),
      });
    },
  );
}

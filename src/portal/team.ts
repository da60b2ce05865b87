import { Type } from '@sinclair/typebox';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { disableUser } from '../app/portal/disable-user.ts';
import { inviteTeamUser } from '../app/portal/invite-user.ts';
import { listUsers } from '../app/portal/list-users.ts';
import { teamPasswordLink } from '../app/portal/password-link.ts';
import type { Services } from '../app/services.ts';
import type { App } from '../http/typed.ts';
import { say } from './reasons.ts';
import { tOf, unlessRefused, userOf, type Render } from './web.ts';

const Text = (max = 200) => Type.Optional(Type.String({ maxLength: max }));
const Csrf = { _csrf: Text() };

/** Team (owners): the partner's users, `Invite user` with a link shown once, and `Disable`. */
export async function teamPages(
  app: App,
  svc: Services,
  render: Render,
  context: Record<string, unknown>,
): Promise<void> {
  const show = async (
    req: FastifyRequest,
    reply: FastifyReply,
    extra: Record<string, unknown> = {},
    status = 200,
  ) =>
    render(
      req,
      reply,
      'team',
      {
        title: tOf(req)('team.title'),
        current: 'team',
        users: await listUsers(svc, userOf(req)),
        form: { email: '', role: 'cashier' },
        ...context,
        ...extra,
      },
      status,
    );

  app.get('/team', { schema: { querystring: Type.Object({ done: Text(40) }) } }, async (req, reply) =>
    show(req, reply),
  );

  // The invitation link is on this answer only (never stored in clear, never logged): no redirect.
  app.post(
    '/team/users',
    { schema: { body: Type.Object({ ...Csrf, email: Text(500), role: Text(20) }) } },
    async (req, reply) => {
      const form = { email: req.body.email ?? '', role: req.body.role ?? '' };
      return unlessRefused(
        async () => {
          const invited = await inviteTeamUser(svc, userOf(req), form);
          return render(
            req,
            reply,
            'invited',
            { title: tOf(req)('team.invited'), current: 'team', invited },
            201,
          );
        },
        (r) => show(req, reply, { inviteError: say(tOf(req), r.message), form }, r.status),
      );
    },
  );

  // A new set-password link (decision 0086), shown on this answer only, as an invitation's.
  app.post(
    '/team/users/:id/password-link',
    { schema: { params: Type.Object({ id: Type.String({ maxLength: 64 }) }), body: Type.Object(Csrf) } },
    async (req, reply) =>
      unlessRefused(
        async () => {
          const invited = await teamPasswordLink(svc, userOf(req), req.params.id);
          return render(
            req,
            reply,
            'invited',
            { title: tOf(req)('team.passwordLinkTitle'), current: 'team', invited, reset: true },
            201,
          );
        },
        (r) => show(req, reply, { error: say(tOf(req), r.message) }, r.status),
      ),
  );

  app.post(
    '/team/users/:id/disable',
    { schema: { params: Type.Object({ id: Type.String({ maxLength: 64 }) }), body: Type.Object(Csrf) } },
    async (req, reply) =>
      unlessRefused(
        async () => {
          await disableUser(svc, userOf(req), req.params.id);
          return reply.redirect('/portal/team?done=disabled', 303);
        },
        (r) => show(req, reply, { error: say(tOf(req), r.message) }, r.status),
      ),
  );
}

import { createRequire } from 'node:module';
import { dirname } from 'node:path';
import { fileURLToPath } from 'node:url';
import fastifyCookie from '@fastify/cookie';
import fastifyCsrfProtection from '@fastify/csrf-protection';
import fastifyFormbody from '@fastify/formbody';
import fastifyHelmet from '@fastify/helmet';
import fastifyStatic from '@fastify/static';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import fastifyView from '@fastify/view';
import { Type } from '@sinclair/typebox';
import { Eta } from 'eta';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { acceptInvitation } from '../app/portal/accept-invitation.ts';
import { changePassword } from '../app/portal/change-password.ts';
import { INVALID_INVITATION, readInvitation } from '../app/portal/read-invitation.ts';
import { PORTAL_ROLES, ROLE_TEXT } from '../app/portal/roles.ts';
import { portalSessionFor } from '../app/portal/session.ts';
import { signIn } from '../app/portal/sign-in.ts';
import { signOut } from '../app/portal/sign-out.ts';
import { MIN_PASSWORD_LENGTH } from '../app/portal/password.ts';
import type { Services } from '../app/services.ts';
import {
  isRecord,
  isSameSite,
  isSecure,
  pageErrorHandler,
  pageFormats,
  pagePath,
  pageRenderer,
  Text,
  toSignIn,
} from '../http/pages.ts';
import { BAD_TEXT, findBadText } from '../http/text-guard.ts';
import { pageHelmet } from '../http/page-headers.ts';
import type { App } from '../http/typed.ts';
import { chooseLanguage } from '../app/portal/choose-language.ts';
import { DEFAULT_LANGUAGE, formatsFor, LANGUAGES, languageOf, translator } from './i18n.ts';
import { areaRefusal } from './areas.ts';
import { homeFor, navFor } from './nav.ts';
import { say, stored } from './reasons.ts';
import { orderPages } from './orders.ts';
import { developerPages } from './developers.ts';
import { sellPages } from './sell/index.ts';
import { teamPages } from './team.ts';
import { walletPages, walletRefused } from './wallet.ts';
import { notice, unlessRefused } from './web.ts';

/**
 * The partner portal (decision 0037): a partner's own people at /portal, server-rendered like the
 * console (eta templates, htmx for partial updates, every page working without it), on the
 * maintained plugins: @fastify/helmet for the security headers, @fastify/csrf-protection for the
 * tokens of every state-changing request, @fastify/static for the stylesheet and htmx. A session is a
 * random id in an HttpOnly, SameSite=Strict cookie (Path=/portal, Secure behind https); every POST of a
 * session carries its CSRF token (a hidden field, or the X-CSRF-Token header htmx sends) and every POST
 * comes from this origin, or it is refused with 403 before anything runs.
 */
export const COOKIE = 'polita_portal';
const HTMX_DIR = dirname(createRequire(import.meta.url).resolve('htmx.org/dist/htmx.min.js'));
/** The console's stylesheet, which the portal wears under its own colours (static/portal.css). */
const CONSOLE_STATIC_DIR = fileURLToPath(new URL('../console/static/', import.meta.url));

/** Paths a visitor without a session may open. */
const isPublic = (path: string) =>
  path === '/portal/sign-in' || path.startsWith('/portal/invitations/') || path.startsWith('/portal/static/');

/**
 * @fastify/csrf-protection's session mode reads its secret from `request.session`: the portal's own
 * session (a row of portal_sessions) is put there, so tokens are bound to the session and checked
 * alike on every instance. Nothing else in the service uses `request.session`.
 */
const setCsrfSecret = (req: FastifyRequest, secret: string) => {
  req.session = { _csrf: secret };
};

declare module 'fastify' {
  interface FastifyRequest {
    /** The portal session's CSRF secret, where @fastify/csrf-protection's session mode looks. */
    session?: { _csrf: string };
  }
}

export async function portalRoutes(app: App, svc: Services): Promise<void> {
  await app.register(
    async (scope) => {
      const p = scope.withTypeProvider<TypeBoxTypeProvider>();
      await p.register(fastifyHelmet, {
        ...pageHelmet(),
        // Whether the origin is https-only is for whoever terminates TLS to say, for /v1 as well.
        strictTransportSecurity: false,
      });
      await p.register(fastifyCookie);
      await p.register(fastifyFormbody, { bodyLimit: 64 * 1024 });
      await p.register(fastifyCsrfProtection, { sessionPlugin: '@fastify/session' });
      await p.register(fastifyStatic, {
        root: fileURLToPath(new URL('./static/', import.meta.url)),
        prefix: '/static/',
        // One route per file found at start: any other path under /static is the portal's 404.
        wildcard: false,
        index: false,
        maxAge: 3_600_000,
      });
      await p.register(fastifyView, {
        engine: { eta: new Eta({ autoEscape: true, autoTrim: false }) },
        root: fileURLToPath(new URL('./views/', import.meta.url)),
        production: true,
        defaultContext: { f: pageFormats, sandbox: svc.config.sandbox },
      });

      // Pages, not API: the portal is no part of the API document.
      p.addHook('onRoute', (route) => {
        route.schema = { ...route.schema, hide: true };
      });

      const secure = (req: FastifyRequest) => isSecure(req, svc.config.publicBaseUrl);
      const cookieOptions = (req: FastifyRequest) => ({
        path: '/portal',
        httpOnly: true,
        sameSite: 'strict' as const,
        secure: secure(req),
      });

      const render = pageRenderer((req, reply) => {
        const session = req.portalSession;
        const lang = req.portalLanguage ?? DEFAULT_LANGUAGE;
        const t = translator(lang);
        const done = notice(isRecord(req.query) ? req.query.done : undefined);
        return {
          user: session?.user,
          nav: session ? navFor(session.user.role) : [],
          csrfToken: session ? reply.generateCsrf() : '',
          notice: done ? t(done) : undefined,
          lang,
          languages: LANGUAGES,
          t,
          f: formatsFor(lang),
          /** A stored text (an order's failure, a delivery's error) in words where the catalogue has them. */
          reason: (text: string) => stored(t, text),
        };
      });
      const tOf = (req: FastifyRequest) => translator(req.portalLanguage ?? DEFAULT_LANGUAGE);

      p.addHook('onRequest', async (req, reply) => {
        const path = pagePath(req, reply, '/portal/static/');
        if (path === undefined) return;
        const session = await portalSessionFor(svc, req.cookies[COOKIE]);
        // The user's language, else the browser's (decision 0096).
        req.portalLanguage = session?.user.language ?? languageOf(req.headers['accept-language']);
        if (session) {
          req.portalSession = session;
          setCsrfSecret(req, session.csrfSecret);
          return;
        }
        if (isPublic(path)) return;
        return toSignIn(req, reply, '/portal/sign-in', () =>
          refuse(req, reply, 403, 'Your session has ended: sign in again, then repeat what you were doing.'),
        );
      });

      // A POST from another origin is refused outright; with a session it must also carry the
      // session's CSRF token. Checked before validation, so a forged request changes nothing and
      // learns nothing about the form.
      p.addHook('preValidation', (req, reply, done) => {
        if (req.method !== 'POST') return done();
        const origin = req.headers.origin;
        if (origin !== undefined && !isSameSite(req, origin, svc.config.publicBaseUrl)) {
          void refuse(req, reply, 403, 'This request came from another site: the portal refuses it.');
          return;
        }
        const bad = findBadText(req.body, 'form');
        const guard = () => {
          if (bad) return void refuse(req, reply, 400, `${bad.replace(/^form\//, '')} ${BAD_TEXT}`);
          done();
        };
        if (!req.portalSession) return guard(); // sign-in and invitations: no session yet
        p.csrfProtection(req, reply, guard);
      });

      // Each page's area (the first part of its route), checked once a request, after the form's own
      // checks as the pages did; Wallet refuses on its own page, without its form.
      const ownRefusal = new Map([['/portal/wallet', walletRefused(render)]]);
      p.addHook('preHandler', async (req, reply) => {
        const route = req.routeOptions.url;
        const session = req.portalSession;
        const message = session && route !== undefined ? areaRefusal(session.user, route) : undefined;
        if (message === undefined) return;
        const own = ownRefusal.get(route!);
        return own ? own(req, reply, { status: 403, message }) : refuse(req, reply, 403, message);
      });

      async function refuse(req: FastifyRequest, reply: FastifyReply, status: number, message: string) {
        const t = tOf(req);
        return render(req, reply, 'error', { title: t('error.title'), message: say(t, message) }, status);
      }

      p.setErrorHandler(pageErrorHandler(refuse, 'portal', 'the operator of the service', svc.health));
      p.setNotFoundHandler(async (req, reply) =>
        refuse(req, reply, 404, `There is no portal page at ${req.url.split('?')[0]}.`),
      );

      for (const [file, dir] of [
        ['htmx.min.js', HTMX_DIR],
        ['console.css', CONSOLE_STATIC_DIR],
      ] as const) {
        p.get(`/static/${file}`, async (_req, reply) =>
          reply.header('cache-control', 'public, max-age=3600').sendFile(file, dir),
        );
      }

      /** The first page the user's role opens: where signing in and /portal lead. */
      const home = (req: FastifyRequest) => homeFor(req.portalSession!.user.role);

      p.get('/', async (req, reply) => reply.redirect(home(req), 303));

      p.get('/sign-in', { schema: { querystring: Type.Object({ done: Text(40) }) } }, async (req, reply) => {
        if (req.portalSession) return reply.redirect(home(req), 303);
        return render(req, reply, 'sign-in', { title: tOf(req)('signIn.title'), email: '' });
      });

      p.post(
        '/sign-in',
        { schema: { body: Type.Object({ email: Text(500), password: Text(500) }) } },
        async (req, reply) => {
          const email = req.body.email ?? '';
          const result = await signIn(svc, { email, password: req.body.password ?? '', address: req.ip });
          if (!result.ok) {
            if (result.retryAfterSeconds) reply.header('retry-after', result.retryAfterSeconds);
            return render(
              req,
              reply,
              'sign-in',
              { title: tOf(req)('signIn.title'), email, error: say(tOf(req), result.message) },
              result.status,
            );
          }
          reply.setCookie(COOKIE, result.sessionId, cookieOptions(req));
          req.portalSession = result.session;
          return reply.redirect(home(req), 303);
        },
      );

      p.post('/sign-out', async (req, reply) => {
        await signOut(svc, req.cookies[COOKIE], req.portalSession!.user);
        reply.clearCookie(COOKIE, cookieOptions(req));
        return reply.redirect('/portal/sign-in?done=signed-out', 303);
      });

      // The token is in the path: these routes log nothing below warn, so not even LOG_LEVEL=debug's
      // request lines write it (decision 0037).
      const Token = Type.Object({ token: Type.String({ maxLength: 100 }) });
      const invitationPage = (req: FastifyRequest) => ({
        title: tOf(req)('invitation.title'),
        minLength: MIN_PASSWORD_LENGTH,
      });
      p.get('/invitations/:token', { logLevel: 'warn', schema: { params: Token } }, async (req, reply) => {
        const invitation = await readInvitation(svc, req.params.token);
        if (!invitation) return refuse(req, reply, 404, INVALID_INVITATION);
        return render(req, reply, 'invitation', { ...invitationPage(req), invitation });
      });

      p.post(
        '/invitations/:token',
        { logLevel: 'warn', schema: { params: Token, body: Type.Object({ password: Text(1000) }) } },
        async (req, reply) =>
          unlessRefused(
            async () => {
              const opened = await acceptInvitation(svc, {
                token: req.params.token,
                password: req.body.password ?? '',
                address: req.ip,
              });
              if (!opened.ok) {
                reply.header('retry-after', opened.retryAfterSeconds);
                return refuse(req, reply, 429, opened.message);
              }
              reply.setCookie(COOKIE, opened.sessionId, cookieOptions(req));
              req.portalSession = opened.session;
              return reply.redirect(home(req), 303);
            },
            async (r) => {
              const invitation = await readInvitation(svc, req.params.token);
              if (!invitation) return refuse(req, reply, 404, INVALID_INVITATION);
              return render(
                req,
                reply,
                'invitation',
                { ...invitationPage(req), invitation, error: say(tOf(req), r.message) },
                r.status,
              );
            },
          ),
      );

      // The language a user chose, kept with the user; back to the page it was chosen on.
      p.post(
        '/language',
        { schema: { body: Type.Object({ language: Text(10), back: Text(500) }) } },
        async (req, reply) => {
          await chooseLanguage(svc, req.portalSession!.user, req.body.language ?? '');
          const back = req.body.back ?? '';
          const safe = /^\/portal(\/[A-Za-z0-9/_:.%-]*)?$/.test(back) ? back : '/portal';
          return reply.redirect(`${safe}${safe.includes('?') ? '&' : '?'}done=language-saved`, 303);
        },
      );

      // Change password (decision 0086): any role, for itself.
      const accountPage = (req: FastifyRequest) => ({
        title: tOf(req)('account.title'),
        current: 'account',
        minLength: MIN_PASSWORD_LENGTH,
      });
      p.get('/account', { schema: { querystring: Type.Object({ done: Text(40) }) } }, async (req, reply) =>
        render(req, reply, 'account', accountPage(req)),
      );
      p.post(
        '/account/password',
        { schema: { body: Type.Object({ _csrf: Text(200), current: Text(500), password: Text(1000) }) } },
        async (req, reply) =>
          unlessRefused(
            async () => {
              const changed = await changePassword(svc, req.portalSession!.user, {
                current: req.body.current ?? '',
                password: req.body.password ?? '',
                sessionId: req.cookies[COOKIE] ?? '',
                address: req.ip,
              });
              if (!changed.ok) {
                reply.header('retry-after', changed.retryAfterSeconds);
                return render(
                  req,
                  reply,
                  'account',
                  { ...accountPage(req), error: say(tOf(req), changed.message) },
                  429,
                );
              }
              return reply.redirect('/portal/account?done=password-changed', 303);
            },
            (r) =>
              render(
                req,
                reply,
                'account',
                { ...accountPage(req), error: say(tOf(req), r.message) },
                r.status,
              ),
          ),
      );

      const context = { roles: PORTAL_ROLES, roleText: ROLE_TEXT };
      await sellPages(p, svc, render);
      await orderPages(p, svc, render);
      await walletPages(p, svc, render);
      await developerPages(p, svc, render);
      await teamPages(p, svc, render, context);
    },
    { prefix: '/portal' },
  );
}

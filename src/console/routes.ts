import { createHmac } from 'node:crypto';
import { createRequire } from 'node:module';
import { dirname } from 'node:path';
import { fileURLToPath } from 'node:url';
import fastifyCookie from '@fastify/cookie';
import fastifyCsrf from '@fastify/csrf-protection';
import fastifyFormbody from '@fastify/formbody';
import fastifyHelmet from '@fastify/helmet';
import fastifyStatic from '@fastify/static';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import fastifyView from '@fastify/view';
import { Type } from '@sinclair/typebox';
import { Eta } from 'eta';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { sessionFor, signIn, signOut } from '../app/admin/console-sessions.ts';
import type { Services } from '../app/services.ts';
import * as page from '../http/pages.ts';
import { BAD_TEXT, findBadText } from '../http/text-guard.ts';
import type { OperatorAuthFailures } from '../http/operator-auth-failures.ts';
import { pageHelmet } from '../http/page-headers.ts';
import type { App } from '../http/typed.ts';
import { orderPages } from './orders.ts';
import { overviewPage } from './overview.ts';
import { partnerPages } from './partners.ts';
import { settingsPages } from './settings.ts';
import { noticeOf } from './web.ts';

/**
 * The operator console (decision 0019): server-rendered pages under /console, partial updates by
 * htmx, everything served by the service itself. A session is a random id in an HttpOnly,
 * SameSite=Strict cookie (Path=/console, Secure behind https); every POST carries a CSRF token
 * bound to the session (a hidden field, or the X-CSRF-Token header htmx sends) or is refused with
 * 403 before anything runs (decision 0034). Each action hands the use case the signed-in operator
 * (the session's actor, via console), so the audit log says who acted.
 */
export const COOKIE = 'polita_console';
/** The CSRF secret of @fastify/csrf-protection, set beside the session cookie with its attributes. */
const CSRF_COOKIE = 'polita_csrf';
/**
 * /console/static/ serves the stylesheet (src/console/static) and htmx from its package, and only
 * these: the other files of htmx's folder are not the console's to publish.
 */
const STATIC_ROOTS = [
  fileURLToPath(new URL('./static/', import.meta.url)),
  dirname(createRequire(import.meta.url).resolve('htmx.org/dist/htmx.min.js')),
];
const STATIC_FILES = new Set(['/console.css', '/htmx.min.js']);

const PUBLIC = new Set(['/console/sign-in']);

export async function consoleRoutes(
  app: App,
  svc: Services,
  adminToken: string,
  failures: OperatorAuthFailures,
): Promise<void> {
  await app.register(
    async (scope) => {
      const c = scope.withTypeProvider<TypeBoxTypeProvider>();
      await c.register(fastifyHelmet, pageHelmet());
      await c.register(fastifyCookie);
      // A token is good only with this browser's CSRF cookie and for the session it was made for
      // (its userInfo is the session's secret). Every instance must accept the others' tokens, so
      // the plugin's HMAC key is derived from the admin token they share.
      await c.register(fastifyCsrf, {
        cookieKey: CSRF_COOKIE,
        cookieOpts: { path: '/console', httpOnly: true, sameSite: 'strict' },
        getUserInfo: (req) => req.consoleSession?.csrfSecret ?? '',
        getToken: (req) => {
          const header = req.headers['x-csrf-token'];
          if (typeof header === 'string') return header;
          const field = page.isRecord(req.body) ? req.body._csrf : undefined;
          return typeof field === 'string' ? field : undefined;
        },
        csrfOpts: {
          userInfo: true,
          hmacKey: createHmac('sha256', adminToken).update('polita console csrf').digest(),
        },
      });
      await c.register(fastifyFormbody, { bodyLimit: 64 * 1024 });
      await c.register(fastifyView, {
        engine: { eta: new Eta({ autoEscape: true, autoTrim: false }) },
        root: fileURLToPath(new URL('./views/', import.meta.url)),
        production: true,
        defaultContext: { f: page.pageFormats, sandbox: svc.config.sandbox },
      });

      const secure = (req: FastifyRequest) => page.isSecure(req, svc.config.publicBaseUrl);

      const render = page.pageRenderer((req, reply) => {
        const done = page.isRecord(req.query) ? req.query.done : undefined;
        const session = req.consoleSession;
        return {
          // Who is signed in; the session's CSRF secret stays out of every template.
          session: session && { actor: session.actor },
          // The token the page's forms and htmx send back (the plugin sets its cookie if missing).
          csrf: session
            ? reply.generateCsrf({ userInfo: session.csrfSecret, secure: secure(req) })
            : undefined,
          notice: typeof done === 'string' ? noticeOf(done) : undefined,
        };
      });

      c.addHook('onRequest', async (req, reply) => {
        const path = page.pagePath(req, reply, '/console/static/');
        if (path === undefined || PUBLIC.has(path)) return;
        const session = await sessionFor(svc, req.cookies[COOKIE], adminToken);
        if (session) {
          req.consoleSession = session;
          return;
        }
        return page.toSignIn(req, reply, '/console/sign-in', () =>
          refuse(req, reply, 403, 'Your console session has ended: sign in again, then repeat the action.'),
        );
      });

      // A POST from another origin is refused outright, before anything else (decision 0034: the
      // CSRF plugin checks tokens, not origins, and sign-in has no session to bind a token to).
      c.addHook('preValidation', async (req, reply) => {
        const origin = req.headers.origin;
        if (
          req.method === 'POST' &&
          origin !== undefined &&
          !page.isSameSite(req, origin, svc.config.publicBaseUrl)
        ) {
          return refuse(req, reply, 403, 'This request came from another site: the console refuses it.');
        }
      });
      // With a session, a POST must carry the session's CSRF token. Checked before validation, so a
      // forged request changes nothing and learns nothing about the form.
      c.addHook('preValidation', (req, reply, done) => {
        if (req.method === 'POST' && req.consoleSession) c.csrfProtection(req, reply, done);
        else done();
      });
      c.addHook('preValidation', async (req, reply) => {
        if (req.method !== 'POST' || !req.consoleSession) return;
        const bad = findBadText(req.body, 'form');
        if (bad) return refuse(req, reply, 400, `${bad.replace(/^form\//, '')} ${BAD_TEXT}`);
      });

      // Pages, not API: the console is no part of the API document.
      c.addHook('onRoute', (route) => {
        route.schema = { ...route.schema, hide: true };
      });

      async function refuse(req: FastifyRequest, reply: FastifyReply, status: number, message: string) {
        return render(req, reply, 'error', { title: 'Refused', message }, status);
      }

      c.setErrorHandler(page.pageErrorHandler(refuse, 'console', 'whoever runs the service', svc.health));
      c.setNotFoundHandler(async (req, reply) =>
        refuse(req, reply, 404, `There is no console page at ${req.url.split('?')[0]}.`),
      );

      await c.register(fastifyStatic, {
        root: STATIC_ROOTS,
        prefix: '/static/',
        allowedPath: (path) => STATIC_FILES.has(path),
        index: false,
        decorateReply: false,
        maxAge: '1h',
      });

      c.get('/sign-in', async (req, reply) => {
        if (await sessionFor(svc, req.cookies[COOKIE], adminToken)) return reply.redirect('/console', 303);
        return render(req, reply, 'sign-in', { title: 'Sign in' });
      });

      c.post(
        '/sign-in',
        { schema: { body: Type.Object({ token: Type.String({ maxLength: 500 }) }) } },
        async (req, reply) => {
          const token = req.body.token.trim();
          const opened = token ? await signIn(svc, token, adminToken) : undefined;
          const limited = !opened && token ? await failures(req, 'console') : undefined;
          if (limited) {
            reply.header('retry-after', limited.retryAfter);
            return render(
              req,
              reply,
              'sign-in',
              {
                title: 'Sign in',
                error: `Too many wrong tokens from this address: try again in ${limited.retryAfter} s.`,
              },
              429,
            );
          }
          if (!opened) {
            return render(
              req,
              reply,
              'sign-in',
              { title: 'Sign in', error: 'That token opens nothing: check it and try again.' },
              401,
            );
          }
          reply.setCookie(COOKIE, opened.sessionId, {
            path: '/console',
            httpOnly: true,
            sameSite: 'strict',
            secure: secure(req),
          });
          return reply.redirect('/console', 303);
        },
      );

      c.post('/sign-out', async (req, reply) => {
        await signOut(svc, req.cookies[COOKIE], req.consoleSession!.actor);
        const attributes = {
          path: '/console',
          httpOnly: true,
          sameSite: 'strict',
          secure: secure(req),
        } as const;
        reply.clearCookie(COOKIE, attributes);
        reply.clearCookie(CSRF_COOKIE, attributes);
        return reply.redirect('/console/sign-in?done=signed-out', 303);
      });

      await overviewPage(c, svc, render);
      await orderPages(c, svc, render);
      await partnerPages(c, svc, render);
      await settingsPages(c, svc, render);
    },
    { prefix: '/console' },
  );
}

import { Type } from '@sinclair/typebox';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { unavailableMessage, type DatabaseHealth } from '../app/availability.ts';
import { DomainError } from '../domain/errors.ts';
import { databaseAway } from './errors.ts';

/**
 * What the two server-rendered surfaces, the operator console (/console) and the partner portal
 * (/portal), do alike (their security headers are page-headers.ts'): how they tell a same-site POST and an https request,
 * how a refusal becomes a page, and the small helpers of their forms and lists. Each surface keeps
 * its own sessions, CSRF binding, pages and words.
 */

/** A hook sees every route's body and query as unknown: a form's fields are read only from an object. */
export const isRecord = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null;

/** The first entry of a forwarded header (`X-Forwarded-Proto`, `X-Forwarded-Host`). */
const firstForwarded = (v: string | string[] | undefined) =>
  String(v ?? '')
    .split(',')[0]!
    .trim();

/** Whether the browser reached the service over https (directly, through a proxy, or as configured). */
export const isSecure = (req: FastifyRequest, publicBaseUrl: string): boolean =>
  req.protocol === 'https' ||
  firstForwarded(req.headers['x-forwarded-proto']) === 'https' ||
  publicBaseUrl.startsWith('https:');

/** Whether an Origin header names this service (as reached directly, through a proxy, or as configured). */
export function isSameSite(req: FastifyRequest, origin: string, publicBaseUrl: string): boolean {
  let host: string;
  try {
    host = new URL(origin).host;
  } catch {
    return false; // "null" (a sandboxed frame, a data: page) or garbage
  }
  if (!host) return false;
  return (
    host === req.headers.host ||
    host === firstForwarded(req.headers['x-forwarded-host']) ||
    host === new URL(publicBaseUrl).host
  );
}

/** The HTTP status of a refusal, as the operator API answers it (http/errors.ts). */
export function statusOf(e: DomainError): number {
  switch (e.code) {
    case 'not_found':
    case 'vehicle_not_found':
      return 404;
    case 'forbidden':
      return 403;
    case 'conflict':
      return 409;
    case 'provider_refused':
      return 502;
    default:
      return 400;
  }
}

/** A use case's refusal: its first reason, every reason of it (`checkAll`), and its status. */
export interface Refusal {
  message: string;
  reasons: readonly string[];
  status: number;
}

/** The refusal of a use case, or undefined when `e` is not one (then it is the error handler's). */
export const refusal = (e: unknown): Refusal | undefined =>
  e instanceof DomainError ? { message: e.reason, reasons: e.reasons, status: statusOf(e) } : undefined;

/**
 * `act`, or, when a use case refuses it (a DomainError), what `refused` makes of the refusal: the
 * page again with the reason, at the status the operator API answers. Any other error is the error
 * handler's.
 */
export async function unlessRefused(
  act: () => Promise<FastifyReply>,
  refused: (r: Refusal) => Promise<FastifyReply>,
): Promise<FastifyReply> {
  try {
    return await act();
  } catch (e) {
    const r = refusal(e);
    if (!r) throw e;
    return refused(r);
  }
}

/** What a surface's error handler shows: the error page at a status, with a message. */
export type Refuse = (
  req: FastifyRequest,
  reply: FastifyReply,
  status: number,
  message: string,
) => Promise<FastifyReply>;

type Failure = Error & { validation?: unknown; statusCode?: number; code?: string };
const CSRF_ERRORS = new Set(['FST_CSRF_MISSING_SECRET', 'FST_CSRF_INVALID_TOKEN']);

/**
 * The error handler of a surface: a use case's refusal, a missing CSRF token, an invalid form or a
 * too-large one becomes the error page with words; a database that cannot be reached is 503 with
 * Retry-After (decision 0050); anything else is logged and shown with the request id to quote.
 * `surface` names it in the words ("console", "portal"), `whom` says who to ask.
 */
export function pageErrorHandler(
  refuse: Refuse,
  surface: string,
  whom: string,
  health: DatabaseHealth | undefined,
) {
  return async (err: Failure, req: FastifyRequest, reply: FastifyReply) => {
    if (err instanceof DomainError) return refuse(req, reply, statusOf(err), err.reason);
    if (CSRF_ERRORS.has(err.code ?? '')) {
      return refuse(
        req,
        reply,
        403,
        `This form did not carry the ${surface}’s security token (CSRF), so nothing was done. Reload the page and try again.`,
      );
    }
    if (err.validation) return refuse(req, reply, 400, err.message);
    const status = err.statusCode ?? 500;
    if (status === 413) return refuse(req, reply, 413, 'The form is larger than 64 KiB.');
    if (status >= 400 && status < 500) return refuse(req, reply, status, err.message);
    if (databaseAway(err, req, reply, health)) return refuse(req, reply, 503, unavailableMessage(req.id));
    req.failure = 'unexpected';
    req.log.error({ err }, `${surface}: unexpected failure`);
    return refuse(req, reply, 500, `Something went wrong; quote request id ${req.id} to ${whom}.`);
  };
}

/**
 * A request without a session to a page that needs one: a GET goes to the sign-in page (htmx is told
 * to go there), anything else is refused with `ended`.
 */
export function toSignIn(
  req: FastifyRequest,
  reply: FastifyReply,
  signInPath: string,
  refuse: () => Promise<FastifyReply>,
): Promise<FastifyReply> | FastifyReply {
  if (req.method === 'GET' || req.method === 'HEAD') {
    if (req.headers['hx-request'] === 'true') return reply.header('hx-redirect', signInPath).code(204).send();
    return reply.redirect(signInPath, 303);
  }
  return refuse();
}

/** '' (an empty form field) is no value. */
export const given = (v: string | undefined): string | undefined =>
  v === undefined || v.trim() === '' ? undefined : v.trim();

/**
 * The fields `keys` of a form or query that are `given`, trimmed, the others left out: a list page's
 * filters, as its use case takes them.
 */
export function givenFields<K extends string>(
  fields: Partial<Record<K, string>>,
  keys: readonly K[],
): Partial<Record<K, string>> {
  const out: Partial<Record<K, string>> = {};
  for (const k of keys) {
    const v = given(fields[k]);
    if (v !== undefined) out[k] = v;
  }
  return out;
}

/** Whether the request came from htmx (a partial update). */
export const fromHtmx = (req: FastifyRequest): boolean => req.headers['hx-request'] === 'true';

export type Render = (
  req: FastifyRequest,
  reply: FastifyReply,
  view: string,
  data: Record<string, unknown>,
  status?: number,
) => Promise<FastifyReply>;

/**
 * A page its GET shows and its forms show again: with what the handler adds (a notice, a refusal,
 * what a form keeps) and the status to answer with.
 */
export type Show = (
  req: FastifyRequest,
  reply: FastifyReply,
  extra?: Record<string, unknown>,
  status?: number,
) => Promise<FastifyReply>;

/** A page of one record by its id, as `Show`. */
export type ShowById = (
  req: FastifyRequest,
  reply: FastifyReply,
  id: string,
  extra?: Record<string, unknown>,
  status?: number,
) => Promise<FastifyReply>;

/** A `Show` of `view` with what `data` reads (the page's title and nav among it). */
export const showPage =
  (render: Render, view: string, data: (req: FastifyRequest) => Promise<Record<string, unknown>>): Show =>
  async (req, reply, extra = {}, status = 200) =>
    render(req, reply, view, { ...(await data(req)), ...extra }, status);

/** A `ShowById` of `view` with what `data` reads of the record (the page's title and nav among it). */
export const showById =
  (
    render: Render,
    view: string,
    data: (req: FastifyRequest, id: string) => Promise<Record<string, unknown>>,
  ): ShowById =>
  async (req, reply, id, extra = {}, status = 200) =>
    render(req, reply, view, { ...(await data(req, id)), ...extra }, status);

/**
 * A page of a cursor-paged list, at its route's address: the use case's rows under `rows` from the
 * query's `cursor` on, links to the next and the first page that keep the filters (htmx is told the
 * address it showed), or, when the use case refuses the filters, the page without rows and with the
 * reason at the operator API's status.
 */
export async function listPage<K extends string>(
  req: FastifyRequest & { query: { cursor?: string | undefined } },
  reply: FastifyReply,
  render: Render,
  o: {
    view: string;
    filters: Record<string, string | undefined>;
    data: Record<string, unknown>;
    rows: K;
    load: (page: { cursor?: string }) => Promise<Record<K, unknown[]> & { next_cursor: string | null }>;
    /** A refusal as the surface words it (the portal in the page's language); as it is by default. */
    say?: (reason: string) => string;
  },
): Promise<FastifyReply> {
  const cursor = given(req.query.cursor);
  const at = (c?: string | null) => `${req.routeOptions.url!}${queryOf({ ...o.filters, cursor: c })}`;
  if (fromHtmx(req)) reply.header('hx-push-url', at(cursor));
  const data = { ...o.data, firstPage: cursor ? at() : null };
  return unlessRefused(
    async () => {
      const page = await o.load(cursor ? { cursor } : {});
      const next = page.next_cursor ? at(page.next_cursor) : null;
      return render(req, reply, o.view, { ...data, [o.rows]: page[o.rows], next });
    },
    (r) =>
      render(
        req,
        reply,
        o.view,
        { ...data, [o.rows]: [], next: null, error: o.say ? o.say(r.message) : r.message },
        r.status,
      ),
  );
}

/** A query string of the given fields, the empty ones left out (links that keep a page's filters). */
export function queryOf(fields: Record<string, string | undefined | null>): string {
  const q = new URLSearchParams();
  for (const [k, v] of Object.entries(fields)) if (v) q.set(k, v);
  const s = q.toString();
  return s ? `?${s}` : '';
}

/** An optional text field of a form or query, at most `max` characters. */
export const Text = (max = 200) => Type.Optional(Type.String({ maxLength: max }));
/** The `:id` of a page's address. */
export const Id = Type.Object({ id: Type.String({ maxLength: 64 }) });

/** Formatting the templates share. */
export const pageFormats = {
  /** An amount in MDL with two decimals. */
  mdl: (n: number) => `${n.toFixed(2)} MDL`,
  /** An ISO-8601 local time as `2026-09-30 14:05:09`. */
  when: (iso: string | null | undefined) => (iso ? iso.slice(0, 19).replace('T', ' ') : ''),
  json: (v: unknown) => (v === null || v === undefined ? '' : JSON.stringify(v, null, 2)),
};

/**
 * A surface's Render: the view with the page's path, what `context` adds (who is signed in, the
 * CSRF token, the notice of a `?done=`) and the handler's data, as an HTML page.
 */
export function pageRenderer(
  context: (req: FastifyRequest, reply: FastifyReply) => Record<string, unknown>,
): Render {
  return async (req, reply, view, data, status = 200) => {
    const html = await reply.viewAsync(view, {
      path: req.url.split('?')[0],
      ...context(req, reply),
      ...data,
    });
    return reply.code(status).type('text/html; charset=utf-8').send(html);
  };
}

/**
 * The start of a surface's onRequest hook: the page's path, or undefined for a static file (which
 * needs no session). Pages hold the operator's or the partner's data: never kept by a browser or proxy.
 */
export function pagePath(req: FastifyRequest, reply: FastifyReply, staticPrefix: string): string | undefined {
  const path = req.url.split('?')[0]!;
  if (path.startsWith(staticPrefix)) return undefined;
  reply.header('cache-control', 'no-store');
  return path;
}

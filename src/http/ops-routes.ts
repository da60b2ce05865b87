import { timingSafeEqual } from 'node:crypto';
import { Type } from '@sinclair/typebox';
import type { Registry } from 'prom-client';
import { authenticateOperator } from '../app/admin/operators.ts';
import type { Services } from '../app/services.ts';
import { databaseReachable, policyDocument } from '../app/operations.ts';
import { RETRY_AFTER_SECONDS } from '../app/availability.ts';
import { reasonBody, sendError } from './errors.ts';
import { refuseOverLimit, type OperatorAuthFailures } from './operator-auth-failures.ts';
import { OPERATOR_SCHEME } from './openapi.ts';
import { tokenHash } from '../secrets/secret-box.ts';
import { errorResponses, type App } from './typed.ts';

/** Health, readiness, metrics and the policy documents. */
export async function opsRoutes(
  app: App,
  svc: Services,
  registry: Registry,
  opts: { adminToken: string; metricsToken?: string | undefined; failures: OperatorAuthFailures },
): Promise<void> {
  const metricsToken = opts.metricsToken ? Buffer.from(tokenHash(opts.metricsToken), 'hex') : undefined;
  const tags = ['operations'];
  const health = {
    tags,
    summary: 'The process is up',
    operationId: 'getHealth',
    response: { 200: Type.Object({ status: Type.Literal('ok') }, { description: 'The process is up' }) },
  };
  app.get('/healthz', { schema: health }, async () => ({ status: 'ok' as const }));
  const ready = {
    tags,
    summary: 'The database is reachable',
    operationId: 'getReadiness',
    response: {
      200: Type.Object({ status: Type.Literal('ready') }, { description: 'The database is reachable' }),
      ...errorResponses,
    },
  };
  app.get('/readyz', { schema: ready }, async (_req, reply) => {
    if (await databaseReachable(svc)) return { status: 'ready' as const };
    reply.header('retry-after', String(RETRY_AFTER_SECONDS));
    return sendError(reply, reasonBody(503, 'Database unreachable'));
  });
  // Metrics name routes, partners' volumes and queue depths: the service's admin token, an enabled
  // operator's token, or METRICS_TOKEN (for a scraper that should hold nothing more) reads them
  // (decision 0019).
  const metrics = {
    tags,
    summary: 'Prometheus metrics',
    operationId: 'getMetrics',
    security: [{ [OPERATOR_SCHEME]: [] }],
  };
  app.get('/metrics', { schema: metrics }, async (req, reply) => {
    const m = /^Bearer (.+)$/.exec(req.headers.authorization ?? '');
    if (!m)
      return sendError(reply, { statusCode: 401, error: 'Unauthorized', message: 'Missing Bearer token' });
    const token = m[1]!;
    const scraper = metricsToken && timingSafeEqual(metricsToken, Buffer.from(tokenHash(token), 'hex'));
    if (!scraper && !(await authenticateOperator(svc, token, opts.adminToken))) {
      const limited = await opts.failures(req, 'api');
      if (limited) return refuseOverLimit(reply, limited.retryAfter);
      return sendError(reply, { statusCode: 403, error: 'Forbidden', message: 'Invalid token' });
    }
    return reply.type(registry.contentType).send(await registry.metrics());
  });
  // The token is 128 random bits: knowing the URL is the permission, as the file URL is given to the partner.
  const policy = {
    tags,
    summary: 'Policy PDF',
    operationId: 'getPolicyDocument',
    params: Type.Object({ name: Type.String({ maxLength: 100 }) }),
  };
  app.get('/files/:name', { schema: policy }, async (req, reply) => {
    const doc = await policyDocument(svc, req.params.name);
    if (!doc) return sendError(reply, reasonBody(404, 'Document not found'));
    if (doc.refunded) return sendError(reply, reasonBody(410, 'Policy cancelled: the order was refunded'));
    if (doc.replaced) return sendError(reply, reasonBody(410, 'Policy replaced: the order was corrected'));
    return reply
      .type('application/pdf')
      .header('content-disposition', `inline; filename="${req.params.name.slice(0, 8)}.pdf"`)
      .header('cache-control', 'private, max-age=86400')
      .send(Buffer.from(doc.pdf));
  });
}

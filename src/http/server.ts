import { randomUUID } from 'node:crypto';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import Fastify, {
  LogController,
  type FastifyBaseLogger,
  type RawReplyDefaultExpression,
  type RawRequestDefaultExpression,
  type RawServerDefault,
} from 'fastify';
import type { Logger } from 'pino';
import {
  databaseReachable,
  issuanceBacklog,
  issuanceOutboxDepth,
  lastReconciliation,
  ordersByStatus,
} from '../app/operations.ts';
import type { Services } from '../app/services.ts';
import { adminRoutes } from './admin-routes.ts';
import { consoleRoutes } from '../console/routes.ts';
import { portalRoutes } from '../portal/routes.ts';
import { installErrorHandler } from './errors.ts';
import { installMetrics, type MetricsSources } from './metrics.ts';
import { registerApiDocs } from './openapi.ts';
import { requestLogger } from './request-log.ts';
import { schemaErrorMessage } from './schema-errors.ts';
import { opsRoutes } from './ops-routes.ts';
import { partnerRoutes } from './partner-routes.ts';
import { installJsonBodies } from './raw-body.ts';
import { installRepliesAtEndOfTurn } from './replies-at-end-of-turn.ts';
import { SharedWindowCounter } from '../app/rate-limit-store.ts';
import { capConnectionsPerAddress, proxyMatcher } from './client-address.ts';
import { shedNearLimit } from './connection-shedding.ts';
import { operatorAuthFailures } from './operator-auth-failures.ts';
import { sharedSchemas } from './schemas.ts';
import { guardParamsAndQuery } from './text-guard.ts';
import type { App } from './typed.ts';

export interface ServerOptions {
  adminToken: string;
  /** A bearer token that reads /metrics and nothing else (METRICS_TOKEN). */
  metricsToken?: string | undefined;
  /** Open connections beyond this are refused at once (MAX_CONNECTIONS). */
  maxConnections?: number;
  /** A request must arrive whole within this many ms (REQUEST_TIMEOUT_MS). */
  requestTimeoutMs?: number;
  /** An idle keep-alive connection is closed after this many ms (KEEP_ALIVE_TIMEOUT_MS). */
  keepAliveTimeoutMs?: number;
  /** Open connections from one client address beyond this are closed at once (MAX_CONNECTIONS_PER_IP). */
  maxConnectionsPerIp?: number;
  /** Proxies whose X-Forwarded-For names the client (TRUST_PROXY: addresses or CIDRs). */
  trustProxy?: readonly string[];
  logger: Logger;
  queueDepth?: MetricsSources['queueDepth'];
  /** The webhook attempts this process's workers count (none without workers). */
  webhookAttempts?: MetricsSources['webhookAttempts'];
}

const REQUEST_ID = /^[A-Za-z0-9._:-]{1,64}$/;

/** Builds the whole HTTP surface. Never listens: main.ts does, tests use inject(). */
export async function buildServer(svc: Services, opts: ServerOptions): Promise<App> {
  const trusted = proxyMatcher(opts.trustProxy ?? []);
  const requestTimeoutMs = opts.requestTimeoutMs ?? 10_000;
  const app = Fastify<
    RawServerDefault,
    RawRequestDefaultExpression,
    RawReplyDefaultExpression,
    FastifyBaseLogger
  >({
    loggerInstance: opts.logger,
    // A log line per request would cost the hot routes much of their throughput (decision 0033):
    // requests are logged at debug, errors always.
    logController: new LogController({ disableRequestLogging: true }),
    // req.log is made when a request first logs (request-log.ts), not for every request.
    childLoggerFactory: requestLogger,
    // A client's X-Request-Id is taken only when it is a short token of safe characters; anything
    // else (long, spaces, quotes, control characters) is replaced, so it cannot forge log lines.
    requestIdHeader: false,
    genReqId: (req) => {
      const given = req.headers['x-request-id'];
      return typeof given === 'string' && REQUEST_ID.test(given) ? given : randomUUID();
    },
    // Slow clients (decision 0083): the whole request, headers and body, within REQUEST_TIMEOUT_MS,
    // checked every second (Node checks every 30 s by default), and idle keep-alive connections
    // closed after KEEP_ALIVE_TIMEOUT_MS.
    http: {
      headersTimeout: requestTimeoutMs,
      requestTimeout: requestTimeoutMs,
      connectionsCheckingInterval: 1_000,
    },
    requestTimeout: requestTimeoutMs,
    keepAliveTimeout: opts.keepAliveTimeoutMs ?? 5_000,
    bodyLimit: 64 * 1024,
    ajv: {
      customOptions: { coerceTypes: false, removeAdditional: false, discriminator: true, allErrors: false },
    },
    return503OnClosing: true,
    schemaErrorFormatter: (errors, dataVar) => new Error(schemaErrorMessage(errors, dataVar)),
    forceCloseConnections: false,
    // request.ip: the peer, or behind a trusted proxy the right-most X-Forwarded-For entry that is
    // not one (decision 0046); every per-address limit counts by it.
    ...(opts.trustProxy?.length ? { trustProxy: (address: string) => trusted(address) } : {}),
  }).withTypeProvider<TypeBoxTypeProvider>();
  app.server.maxConnections = opts.maxConnections ?? 1024;
  capConnectionsPerAddress(app.server, opts.maxConnectionsPerIp ?? 256, trusted);
  shedNearLimit(app.server, app.server.maxConnections);
  // Set as the request arrives, so every answer carries it (errors too); a callback hook, as it
  // runs on every request and an async one costs a promise each time.
  app.addHook('onRequest', (req, reply, done) => {
    reply.header('x-request-id', req.id);
    done();
  });
  // Path parameters and the query string, before validation (decision 0003). The partner API checks
  // them in its own pipeline, after the signature (decision 0101): a badly signed request is 403
  // whatever its query holds, and counted as a failed authentication.
  app.addHook('preValidation', (req, reply, done) => {
    if (req.routeOptions.url?.startsWith('/v1/')) done();
    else guardParamsAndQuery(req, reply, done);
  });
  if (opts.logger.isLevelEnabled('debug')) {
    app.addHook('onResponse', async (req, reply) => {
      req.log.debug(
        { method: req.method, url: req.url, status: reply.statusCode, ms: reply.elapsedTime },
        'request',
      );
    });
  }
  installErrorHandler(app, svc.health);
  installJsonBodies(app);
  installRepliesAtEndOfTurn(app);
  for (const s of sharedSchemas) app.addSchema(s);

  await registerApiDocs(app, svc);

  const registry = installMetrics(app, {
    ordersByStatus: () => ordersByStatus(svc),
    queueDepth: opts.queueDepth ?? (async () => []),
    issuanceOutbox: () => issuanceOutboxDepth(svc),
    issuanceBacklog: () => issuanceBacklog(svc),
    reconciliation: () => lastReconciliation(svc),
    webhookAttempts: opts.webhookAttempts,
    databaseUp: () => databaseReachable(svc),
  });
  // Request counts shared by every instance: the partners' limits and every failed authentication.
  const counter = new SharedWindowCounter(svc.db, {
    // The database away is said once by its health watch (decision 0050), not at every request.
    onError: (err) =>
      svc.log[svc.health.report(err) ? 'debug' : 'warn'](
        { err },
        'rate-limit counts could not be shared this time',
      ),
  });
  app.addHook('onClose', () => counter.close());
  const failures = operatorAuthFailures(svc, counter, svc.config.adminAuthFailuresPerMinute);
  await app.register(async (scope) => partnerRoutes(scope, svc, counter));
  await app.register(async (scope) => adminRoutes(scope, svc, opts.adminToken, failures));
  await app.register(async (scope) => consoleRoutes(scope, svc, opts.adminToken, failures));
  await app.register(async (scope) => portalRoutes(scope, svc));
  await app.register(async (scope) =>
    opsRoutes(scope, svc, registry, {
      adminToken: opts.adminToken,
      metricsToken: opts.metricsToken,
      failures,
    }),
  );
  return app;
}

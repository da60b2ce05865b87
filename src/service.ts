import { randomBytes } from 'node:crypto';
import { lookup } from 'node:dns/promises';
import type { FastifyInstance } from 'fastify';
import type { PgBoss } from 'pg-boss';
import type { Logger } from 'pino';
import { loadCatalogue } from './app/catalogue.ts';
import { Clock } from './app/clock.ts';
import { PartnerDirectory } from './app/partner-directory.ts';
import {
  ensureAdminToken,
  ensureDemoOwner,
  ensureDemoPartner,
  retireSandboxData,
} from './app/seed-sandbox.ts';
import type { JobQueue, Services } from './app/services.ts';
import type { Config } from './config.ts';
import { openDatabase, type Database } from './db/database.ts';
import { bindSecretBox } from './db/repos/partners.ts';
import { policyRenderer } from './documents/pdf-pool.ts';
import { createLogger } from './log.ts';
import { secureStoredSecrets } from './secrets/at-rest.ts';
import { loadSecretKeys } from './secrets/keys.ts';
import type { SecretBox } from './secrets/secret-box.ts';
import { buildServer } from './http/server.ts';
import { dispatchQueuedIssuance, ISSUANCE_BATCH } from './app/issuance-queue.ts';
import { dispatchQueuedDeliveries, DELIVERY_BATCH } from './app/webhook-events.ts';
import { WebhookAttempts } from './app/ops-counters.ts';
import { Outbox } from './jobs/outbox.ts';
import { jobQueue, startBoss } from './jobs/queue.ts';
import { startWorkers } from './jobs/workers.ts';
import { SandboxIssuer } from './providers/sandbox/issuer.ts';
import { SandboxRoVignetteRegistry } from './providers/sandbox/ro-vignettes.ts';
import { SandboxVehicleRegistry } from './providers/sandbox/vehicles.ts';

export interface Service {
  app: FastifyInstance;
  svc: Services;
  boss: PgBoss;
  /** Turns paid orders into issue-order jobs; `flush()` creates those still queued now. */
  outbox: Outbox;
  /** Turns the events of issued orders into their first deliver-webhook jobs; `flush()` the same. */
  webhookOutbox: Outbox;
  database: Database;
  adminToken: string;
  /** The sandbox's demo partner and its demo portal owner (null when its address is another partner's). */
  demo: { id: string; secret: string; owner: { email: string; password: string } | null } | null;
  /** Where the key of the partner secrets came from (SECRET_KEY or DATA_DIR/secret.key), for the banner. */
  secretKey: string;
  /**
   * Graceful stop: no new requests, in-flight requests and jobs finish, then the pool closes and
   * the embedded server (if this process started one) shuts down.
   */
  stop(): Promise<void>;
}

/**
 * Everything a use case may touch, on an open database. The service and the operator command
 * line (src/cli/admin.ts) both wire their use cases here, so they behave alike.
 */
export function createServices(
  config: Config,
  database: Database,
  opts: { log: Logger; jobs: JobQueue; secrets: SecretBox; resolve?: Services['resolve'] },
): Services {
  // For the few readers of partners that go to the repository with svc.db rather than the directory.
  bindSecretBox(database.db, opts.secrets);
  return {
    db: database.db,
    health: database.health,
    clock: new Clock(database.db, config.sandbox),
    partners: new PartnerDirectory(database.db, opts.secrets),
    catalogue: loadCatalogue(),
    providers: {
      vehicles: new SandboxVehicleRegistry(),
      issuer: new SandboxIssuer(),
      roVignettes: new SandboxRoVignetteRegistry(database.db),
    },
    jobs: opts.jobs,
    documents: policyRenderer(config.pdfThreads),
    log: opts.log,
    config: {
      publicBaseUrl: config.publicBaseUrl,
      sandbox: config.sandbox,
      sandboxAsyncIssueMs: config.sandboxAsyncIssueMs,
      rateLimitPerMinute: config.rateLimitPerMinute,
      authFailuresPerMinute: config.authFailuresPerMinute,
      adminAuthFailuresPerMinute: config.adminAuthFailuresPerMinute,
      portalSignIn: {
        perAddress: config.portalSignInFailuresPerAddress,
        perEmail: config.portalSignInFailuresPerEmail,
        windowMs: config.portalSignInWindowMinutes * 60_000,
      },
      webhookRetrySchedule: config.webhookRetrySchedule,
      defaultRequireTimestampedSignature: config.defaultRequireTimestampedSignature,
    },
    randomBytes: (n) => randomBytes(n),
    resolve: opts.resolve ?? ((host) => lookup(host, { all: true })),
  };
}

/**
 * The composition root: config → database (the embedded server, migrations) → job queue → services
 * → server.
 * Everything is wired by hand here; main.ts, the tests and the benchmark all start the service this way.
 */
export async function startService(
  config: Config,
  opts: {
    logger?: Logger;
    database?: Database;
    resolve?: Services['resolve'];
    workers?: boolean;
  } = {},
): Promise<Service> {
  const log = opts.logger ?? createLogger(config.logLevel);
  const database =
    opts.database ??
    (await openDatabase({
      databaseUrl: config.databaseUrl,
      dataDir: config.dataDir,
      prepare: config.pgPreparedStatements,
      log: (message, level = 'info') => log[level](message),
    }));
  try {
    // Secrets at rest: the key, then the rows still in clear encrypted and every row checked
    // against the key, before anything else reads a partner (a wrong key stops the start here).
    const keys = await loadSecretKeys(config);
    for (const warning of keys.warnings) log.warn(warning);
    const { converted } = await secureStoredSecrets(database.db, keys.box, keys.where);
    log.info(
      { keyId: keys.box.keyId, source: keys.source, converted },
      `partner secrets encrypted with ${keys.describe}${converted ? `; ${converted} stored in clear were encrypted now` : ''}`,
    );
    const boss = await startBoss(database, log);
    // The outboxes' dispatch needs the services, whose job port kicks the outboxes.
    const outbox = new Outbox('issuance', () => dispatchQueuedIssuance(svc), ISSUANCE_BATCH, log);
    const webhookOutbox = new Outbox('webhook', () => dispatchQueuedDeliveries(svc), DELIVERY_BATCH, log);
    const svc = createServices(config, database, {
      log,
      jobs: jobQueue(boss, { issuance: outbox, webhooks: webhookOutbox }),
      secrets: keys.box,
      ...(opts.resolve ? { resolve: opts.resolve } : {}),
    });
    const adminToken = await ensureAdminToken(svc, {
      configured: config.adminToken,
      dataDir: config.dataDir,
      embedded: !config.databaseUrl,
    });
    const demo = config.sandbox
      ? { ...(await ensureDemoPartner(svc)), owner: (await ensureDemoOwner(svc, config.dataDir)) ?? null }
      : null;
    if (!config.sandbox) await retireSandboxData(svc, config.dataDir);
    const webhookAttempts = new WebhookAttempts();
    const app = await buildServer(svc, {
      adminToken,
      logger: log,
      maxConnections: config.maxConnections,
      requestTimeoutMs: config.requestTimeoutMs,
      keepAliveTimeoutMs: config.keepAliveTimeoutMs,
      maxConnectionsPerIp: config.maxConnectionsPerIp,
      trustProxy: config.trustProxy,
      metricsToken: config.metricsToken,
      webhookAttempts,
      queueDepth: async () =>
        (await boss.getQueues()).map((q) => ({
          queue: q.name,
          ready: q.readyCount,
          active: q.activeCount,
          deferred: q.deferredCount,
        })),
    });
    const workers =
      (opts.workers ?? config.workers)
        ? await startWorkers(boss, svc, {
            webhookAttempts,
            reconcileIntervalSeconds: config.reconcileIntervalSeconds,
          })
        : undefined;
    if (workers) {
      outbox.onDispatched(() => workers.issuanceQueued());
      webhookOutbox.onDispatched(() => workers.deliveriesQueued());
    }
    // Last: a start that fails before here leaves no poll running on the closed database. Kicks
    // come from requests, and none is served before this returns.
    outbox.start();
    webhookOutbox.start();
    let stopping: Promise<void> | undefined;
    return {
      app,
      svc,
      boss,
      outbox,
      webhookOutbox,
      database,
      adminToken,
      demo,
      secretKey: keys.describe,
      stop: () =>
        (stopping ??= (async () => {
          await app.close();
          await outbox.stop();
          await workers?.stop();
          await webhookOutbox.stop();
          await boss.stop({ graceful: true, timeout: 15_000, close: true });
          await svc.documents.close();
          if (!opts.database) await database.close();
        })()),
    };
  } catch (err) {
    if (!opts.database) await database.close().catch(() => {});
    throw err;
  }
}

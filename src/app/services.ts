import type { DatabaseHealth } from '../db/availability.ts';
import type { Transaction } from 'kysely';
import type { Logger } from 'pino';
import type { Db } from '../db/database.ts';
import type { DB } from '../db/schema.ts';
import type { PolicyRenderer } from '../documents/pdf-pool.ts';
import type { Providers } from '../providers/types.ts';
import type { Catalogue } from './catalogue.ts';
import type { Clock } from './clock.ts';
import type { PartnerDirectory } from './partner-directory.ts';

export type JobName =
  'issue-order' | 'deliver-webhook' | 'expire-drafts' | 'renewal-notices' | 'purge-events';

/** The background-job port. Enqueueing goes through the caller's transaction: the job exists iff the change commits. */
export interface JobQueue {
  enqueue(
    trx: Transaction<DB>,
    name: JobName,
    data: Record<string, unknown>,
    opts?: {
      startAfterSeconds?: number;
      singletonKey?: string;
      /** Jobs of one group (a partner's webhook deliveries) are limited in how many run at once. */
      group?: string;
    },
  ): Promise<void>;
  /** Many jobs of one queue in one statement, in the caller's transaction. */
  enqueueMany(
    trx: Transaction<DB>,
    name: JobName,
    jobs: { data: Record<string, unknown>; singletonKey?: string; group?: string }[],
  ): Promise<void>;
  /**
   * Orders were queued for issuance (the issuance outbox) by a transaction that has committed: their
   * issue-order jobs are created soon, by this process or, should it die first, by any other.
   */
  issuanceQueued(): void;
  /** Events were queued in the webhook outbox by a transaction that has committed (the same, for their first delivery jobs). */
  deliveriesQueued(): void;
}

/** Everything a use case may touch, wired by hand in main.ts (and in the test helper). */
export interface Services {
  db: Db;
  /** Whether the database answers, as this process last found; told of every unavailability met. */
  health: DatabaseHealth;
  clock: Clock;
  partners: PartnerDirectory;
  catalogue: Catalogue;
  providers: Providers;
  jobs: JobQueue;
  /** Policy PDFs, rendered off the event loop. */
  documents: PolicyRenderer;
  log: Logger;
  config: {
    publicBaseUrl: string;
    sandbox: boolean;
    sandboxAsyncIssueMs: number;
    /** /v1 requests a minute of a partner without its own rate_limit_per_minute. */
    rateLimitPerMinute: number;
    /** Failed authentications a minute from one client address before 429. */
    authFailuresPerMinute: number;
    /** Wrong operator tokens a minute from one client address before 429 (decision 0046). */
    adminAuthFailuresPerMinute: number;
    /** Failed portal sign-ins allowed per client address, and per address and email, in the window (decision 0039). */
    portalSignIn: { perAddress: number; perEmail: number; windowMs: number };
    /** Seconds before each retry of a webhook event that was not answered 2xx (WEBHOOK_RETRY_SCHEDULE). */
    webhookRetrySchedule: readonly number[];
    /** Whether a partner created without saying refuses X-Hmac-Signature alone (decision 0084). */
    defaultRequireTimestampedSignature: boolean;
  };
  /** Randomness comes in here so that nothing else reaches for it. */
  randomBytes(n: number): Uint8Array;
  /**
   * Name resolution for webhook deliveries (Node's dns lookup, all addresses, in production; a fake
   * in tests): deliveries resolve once, check every address, and connect only to those.
   */
  resolve(host: string): Promise<{ address: string; family: number }[]>;
}

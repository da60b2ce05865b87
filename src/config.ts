import { availableParallelism } from 'node:os';
import ipaddr from 'ipaddr.js';

/** The environment, read once at start, validated and typed. A bad value stops the start with its name. */
export interface Config {
  port: number;
  host: string;
  publicBaseUrl: string;
  databaseUrl: string | undefined;
  dataDir: string;
  /** Undefined in the sandbox until main generates or loads one. */
  adminToken: string | undefined;
  /** SECRET_KEY, 64 hex (AES-256-GCM of partner secrets); unset in the sandbox: DATA_DIR/secret.key. */
  secretKey: string | undefined;
  /** SECRET_KEY_PREVIOUS: also tried for decryption while a key rotation is under way. */
  secretKeyPrevious: string | undefined;
  sandbox: boolean;
  sandboxAsyncIssueMs: number;
  /** /v1 requests a minute of a partner without its own rate_limit_per_minute. */
  rateLimitPerMinute: number;
  /** Failed authentications a minute from one client address before 429. */
  authFailuresPerMinute: number;
  /** Wrong operator tokens (/admin, /metrics, console sign-in) a minute from one client address before 429. */
  adminAuthFailuresPerMinute: number;
  /**
   * Proxies whose X-Forwarded-For is believed (TRUST_PROXY: addresses or CIDRs, comma-separated):
   * the client address is the right-most entry not among them (decision 0046).
   */
  trustProxy: string[];
  /** Open connections from one client address beyond this are closed at once (trusted proxies exempt). */
  maxConnectionsPerIp: number;
  /** Failed portal sign-ins a client address may make within the window; past it, 429 (decision 0039). */
  portalSignInFailuresPerAddress: number;
  /** Failed portal sign-ins for one email from one address within the window; past it, 429. */
  portalSignInFailuresPerEmail: number;
  /** The window of the two limits above, in minutes. */
  portalSignInWindowMinutes: number;
  /** Seconds before each retry of a webhook event (WEBHOOK_RETRY_SCHEDULE, comma-separated). */
  webhookRetrySchedule: number[];
  /** False: this instance serves HTTP and enqueues jobs, and worker instances on the same database run them. */
  workers: boolean;
  /** Reads /metrics (besides the admin token). */
  metricsToken: string | undefined;
  /** Worker instances reconcile the books when no run has begun for this long (decision 0056). */
  reconcileIntervalSeconds: number;
  /** Open HTTP connections beyond this are refused at once. */
  maxConnections: number;
  /** A request must arrive whole (headers and body) within this many ms, else 408 and closed (decision 0083). */
  requestTimeoutMs: number;
  /** A keep-alive connection idle this many ms is closed. */
  keepAliveTimeoutMs: number;
  /** New partners (and the sandbox's demo partner) refuse the contract's X-Hmac-Signature alone (decision 0084). */
  defaultRequireTimestampedSignature: boolean;
  /** PostgreSQL only: repeated query texts go as named prepared statements (off behind a pooler that cannot keep them). */
  pgPreparedStatements: boolean;
  /** Worker threads rendering policy PDFs (PDF_THREADS); 0 renders on the event loop. */
  pdfThreads: number;
  logLevel: 'fatal' | 'error' | 'warn' | 'info' | 'debug' | 'trace' | 'silent';
}

export class ConfigError extends Error {
  override name = 'ConfigError';
}

const LOG_LEVELS = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'] as const;

export function loadConfig(env: NodeJS.ProcessEnv = process.env): Config {
  const int = (name: string, fallback: number, min: number, max: number): number => {
    const raw = env[name];
    if (raw === undefined || raw === '') return fallback;
    if (!/^\d+$/.test(raw) || Number(raw) < min || Number(raw) > max) {
      throw new ConfigError(`${name} must be a whole number from ${min} to ${max}, got "${raw}"`);
    }
    return Number(raw);
  };
  const bool = (name: string, fallback: boolean): boolean => {
    const raw = env[name]?.toLowerCase();
    if (raw === undefined || raw === '') return fallback;
    if (['true', '1', 'yes'].includes(raw)) return true;
    if (['false', '0', 'no'].includes(raw)) return false;
    throw new ConfigError(`${name} must be true or false, got "${env[name]}"`);
  };

  const port = int('PORT', 3000, 0, 65535);
  const host = env.HOST || '127.0.0.1';
  const sandbox = bool('SANDBOX', true);
  const publicBaseUrl = (
    env.PUBLIC_BASE_URL || `http://${host.includes(':') ? `[${host}]` : host}:${port}`
  ).replace(/\/+$/, '');
  if (!/^https?:\/\/[^\s]+$/.test(publicBaseUrl)) {
    throw new ConfigError(`PUBLIC_BASE_URL must be an http(s) URL, got "${env.PUBLIC_BASE_URL}"`);
  }
  const databaseUrl = env.DATABASE_URL || undefined;
  if (databaseUrl && !/^postgres(ql)?:\/\/.+$/.test(databaseUrl)) {
    throw new ConfigError(
      'DATABASE_URL must be postgres://user@host:port/db or postgresql://…; leave it unset for the embedded PostgreSQL in DATA_DIR',
    );
  }
  const adminToken = env.ADMIN_TOKEN || undefined;
  // Outside the sandbox an operator token guards real money (decision 0047).
  const tokenMin = sandbox ? 16 : 32;
  if (adminToken !== undefined && adminToken.length < tokenMin) {
    throw new ConfigError(
      `ADMIN_TOKEN must be at least ${tokenMin} characters${sandbox ? '' : ' when SANDBOX=false'}, got ${adminToken.length}: for example openssl rand -hex 32`,
    );
  }
  if (!sandbox && !adminToken) throw new ConfigError('ADMIN_TOKEN is required when SANDBOX=false');
  const secretKey = hexKey(env, 'SECRET_KEY');
  const secretKeyPrevious = hexKey(env, 'SECRET_KEY_PREVIOUS');
  if (!sandbox && !secretKey) {
    throw new ConfigError(
      'SECRET_KEY is required when SANDBOX=false: 64 hex characters that encrypt the partner secrets (openssl rand -hex 32); keep it with your backups',
    );
  }
  const metricsToken = env.METRICS_TOKEN || undefined;
  if (metricsToken !== undefined && metricsToken.length < 16) {
    throw new ConfigError('METRICS_TOKEN must be at least 16 characters');
  }
  const logLevel = (env.LOG_LEVEL || 'info').toLowerCase();
  if (!(LOG_LEVELS as readonly string[]).includes(logLevel)) {
    throw new ConfigError(`LOG_LEVEL must be one of ${LOG_LEVELS.join(', ')}, got "${env.LOG_LEVEL}"`);
  }
  return {
    port,
    host,
    publicBaseUrl,
    databaseUrl,
    dataDir: env.DATA_DIR || './data',
    adminToken,
    secretKey,
    secretKeyPrevious,
    sandbox,
    sandboxAsyncIssueMs: int('SANDBOX_ASYNC_ISSUE_MS', 20_000, 0, 3_600_000),
    rateLimitPerMinute: int('RATE_LIMIT_PER_MINUTE', 6000, 1, 1_000_000_000),
    authFailuresPerMinute: int('AUTH_FAILURES_PER_MINUTE', 60, 1, 1_000_000),
    adminAuthFailuresPerMinute: int('ADMIN_AUTH_FAILURES_PER_MINUTE', 20, 1, 1_000_000),
    trustProxy: trustedProxies(env.TRUST_PROXY),
    maxConnectionsPerIp: int('MAX_CONNECTIONS_PER_IP', 256, 1, 1_000_000),
    portalSignInFailuresPerAddress: int('PORTAL_SIGN_IN_FAILURES_PER_ADDRESS', 20, 1, 1_000_000),
    portalSignInFailuresPerEmail: int('PORTAL_SIGN_IN_FAILURES_PER_EMAIL', 5, 1, 1_000_000),
    portalSignInWindowMinutes: int('PORTAL_SIGN_IN_WINDOW_MINUTES', 15, 1, 1440),
    webhookRetrySchedule: retrySchedule(env.WEBHOOK_RETRY_SCHEDULE),
    workers: bool('WORKERS', true),
    maxConnections: int('MAX_CONNECTIONS', 1024, 1, 1_000_000),
    requestTimeoutMs: int('REQUEST_TIMEOUT_MS', 10_000, 1_000, 600_000),
    keepAliveTimeoutMs: int('KEEP_ALIVE_TIMEOUT_MS', 5_000, 100, 600_000),
    defaultRequireTimestampedSignature: bool('DEFAULT_REQUIRE_TIMESTAMPED_SIGNATURE', true),
    metricsToken,
    reconcileIntervalSeconds: int('RECONCILE_INTERVAL_SECONDS', 600, 1, 86_400),
    pgPreparedStatements: bool('PG_PREPARED_STATEMENTS', true),
    // One core left to the event loop, at most four threads.
    pdfThreads: int('PDF_THREADS', Math.min(4, Math.max(1, availableParallelism() - 1)), 0, 64),
    logLevel: logLevel as Config['logLevel'],
  };
}

export const DEFAULT_WEBHOOK_RETRY_SCHEDULE = [10, 60, 300, 1800, 7200, 21600, 43200, 86400];

/** WEBHOOK_RETRY_SCHEDULE: whole seconds, comma-separated, each 1 to 604800 (a week); at most 20. */
function retrySchedule(raw: string | undefined): number[] {
  if (raw === undefined || raw.trim() === '') return DEFAULT_WEBHOOK_RETRY_SCHEDULE;
  const parts = raw.split(',').map((p) => p.trim());
  if (parts.length > 20 || parts.some((p) => !/^\d+$/.test(p) || Number(p) < 1 || Number(p) > 604_800)) {
    throw new ConfigError(
      `WEBHOOK_RETRY_SCHEDULE must be up to 20 comma-separated whole numbers of seconds from 1 to 604800 (e.g. 10,60,300), got "${raw}"`,
    );
  }
  return parts.map(Number);
}

/** TRUST_PROXY: comma-separated IPv4/IPv6 addresses or CIDRs, checked by ipaddr.js; empty: none. */
function trustedProxies(raw: string | undefined): string[] {
  if (raw === undefined || raw.trim() === '') return [];
  const list = raw.split(',').map((p) => p.trim());
  const bad = list.filter((p) => !(ipaddr.isValid(p) || ipaddr.isValidCIDR(p)));
  if (bad.length > 0) {
    throw new ConfigError(
      `TRUST_PROXY must be comma-separated IP addresses or CIDRs (e.g. 10.0.0.0/8,192.0.2.7), not ${bad.map((b) => `"${b}"`).join(', ')}`,
    );
  }
  return list;
}

/** A 32-byte key given as 64 hex characters (SECRET_KEY, SECRET_KEY_PREVIOUS), lowercased. */
function hexKey(env: NodeJS.ProcessEnv, name: string): string | undefined {
  const raw = env[name]?.trim();
  if (raw === undefined || raw === '') return undefined;
  if (!/^[0-9a-fA-F]{64}$/.test(raw)) {
    throw new ConfigError(
      `${name} must be 64 hex characters (a 32-byte key, e.g. from openssl rand -hex 32), got ${raw.length} characters${/^[0-9a-fA-F]*$/.test(raw) ? '' : ' that are not all hex'}`,
    );
  }
  return raw.toLowerCase();
}

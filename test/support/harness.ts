import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Logger } from 'pino';
import { loadConfig } from '../../src/config.ts';
import { createLogger } from '../../src/log.ts';
import { startService, type Service } from '../../src/service.ts';
import { timestampedSignatureHeader } from '../../src/signature.ts';
import { testDatabaseUrl } from './database.ts';

/** The harness's SECRET_KEY (a test that wants the sandbox's generated DATA_DIR/secret.key sets SECRET_KEY: ''). */
export const TEST_SECRET_KEY = '5ec7e75ec7e75ec7e75ec7e75ec7e75ec7e75ec7e75ec7e75ec7e75ec7e75ec7';

export interface Creds {
  id: string;
  secret: string;
}

export interface Reply<T = Record<string, unknown>> {
  status: number;
  body: T;
  headers: Record<string, unknown>;
}

export interface Harness {
  service: Service;
  demo: Creds;
  adminToken: string;
  /** The test file's own database, for a command line run against it (`DATABASE_URL`). */
  databaseUrl: string;
  /** The service's DATA_DIR. */
  dataDir: string;
  /**
   * A POST /v1/<endpoint> as `creds` (the demo partner by default), signed with the timestamped form
   * every new partner requires (decision 0084).
   */
  call<T = Record<string, unknown>>(endpoint: string, body: unknown, creds?: Creds): Promise<Reply<T>>;
  /** An operator call with the admin token. */
  admin<T = Record<string, unknown>>(
    method: 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE',
    url: string,
    body?: unknown,
  ): Promise<Reply<T>>;
  /** Move the sandbox clock (ISO-8601 with offset), or back to real time with null. */
  setClock(iso: string | null): Promise<void>;
  /** A new partner (with a wallet unless said otherwise). */
  newPartner(opts?: {
    wallet?: boolean;
    webhook_url?: string;
    name?: string;
    require_timestamped_signature?: boolean;
  }): Promise<Creds>;
  /** Polls get-order until the status is reached (or fails with the last status seen). */
  waitForStatus(id: string, status: string, opts?: { creds?: Creds; timeoutMs?: number }): Promise<Reply>;
  /** Serves HTTP on 127.0.0.1 (a free port) for clients outside the process; answers its base URL. */
  listen(): Promise<string>;
  /** Stops the service and starts a new one on the same database and DATA_DIR (a restart). */
  restart(): Promise<void>;
  close(): Promise<void>;
}

/** startHarness, with the sandbox clock set to `now`. */
export async function harnessAt(
  now: string,
  opts: Parameters<typeof startHarness>[0] = {},
): Promise<Harness> {
  const h = await startHarness(opts);
  await h.setClock(now);
  return h;
}

export type Resolver = (host: string) => Promise<{ address: string; family: number }[]>;

/**
 * A resolver for webhook deliveries that never asks DNS: it knows the names given (host → its
 * addresses) and answers ENOTFOUND for any other, so no test sends a packet to a real host name.
 * The harness uses it with `localhost` only, unless a test passes its own.
 */
export function fakeResolver(names: Record<string, string[]>): Resolver {
  return async (host) => {
    const addresses = names[host.toLowerCase()];
    if (!addresses) {
      throw Object.assign(new Error(`getaddrinfo ENOTFOUND ${host} (test resolver)`), { code: 'ENOTFOUND' });
    }
    return addresses.map((address) => ({ address, family: address.includes(':') ? 6 : 4 }));
  };
}

/**
 * Starts the whole service for one test file on a fresh database of its own (see database.ts) with
 * the sandbox providers. Requests go
 * through Fastify's inject, signed exactly as a partner signs them.
 */
export async function startHarness(
  opts: { env?: Record<string, string>; resolve?: Resolver; workers?: boolean; logger?: Logger } = {},
): Promise<Harness> {
  const db = await testDatabaseUrl();
  // The sandbox keeps its generated admin token in DATA_DIR/admin-token: one directory per service.
  const dataDir = mkdtempSync(join(tmpdir(), 'polita-harness-'));
  const config = loadConfig({
    DATABASE_URL: db.url,
    DATA_DIR: dataDir,
    SECRET_KEY: TEST_SECRET_KEY,
    SANDBOX: 'true',
    SANDBOX_ASYNC_ISSUE_MS: '1000',
    PUBLIC_BASE_URL: 'http://polita.test',
    LOG_LEVEL: 'silent',
    // A test that drives load must not meet the demo partner's limit of 6000 a minute on a fast
    // machine; test/http/rate-limit.test.ts tests the limits on services of its own.
    RATE_LIMIT_PER_MINUTE: '1000000',
    ...opts.env,
  });
  const start = () =>
    startService(config, {
      logger: opts.logger ?? createLogger(process.env.TEST_LOG_LEVEL ?? 'silent'),
      resolve: opts.resolve ?? fakeResolver({ localhost: ['127.0.0.1'] }),
      ...(opts.workers === false ? { workers: false } : {}),
    });
  const service = await start();
  const demo = service.demo!;

  const h: Harness = {
    service,
    demo,
    adminToken: service.adminToken,
    databaseUrl: db.url,
    dataDir,
    async call(endpoint, body, creds = demo) {
      const payload = typeof body === 'string' ? body : JSON.stringify(body);
      const res = await h.service.app.inject({
        method: 'POST',
        url: `/v1/${endpoint}`,
        headers: {
          'content-type': 'application/json',
          'x-polita-signature': timestampedSignatureHeader(creds.id, creds.secret, endpoint, payload),
        },
        payload,
      });
      return { status: res.statusCode, body: res.json(), headers: res.headers };
    },
    async admin(method, url, body) {
      const res = await h.service.app.inject({
        method,
        url,
        headers: {
          authorization: `Bearer ${h.service.adminToken}`,
          ...(body !== undefined ? { 'content-type': 'application/json' } : {}),
        },
        ...(body !== undefined ? { payload: JSON.stringify(body) } : {}),
      });
      return { status: res.statusCode, body: (res.body ? res.json() : {}) as never, headers: res.headers };
    },
    async setClock(iso) {
      const res =
        iso === null
          ? await h.admin('DELETE', '/admin/sandbox/clock')
          : await h.admin('PUT', '/admin/sandbox/clock', { now: iso });
      if (res.status !== 200)
        throw new Error(`setClock(${iso}) answered ${res.status}: ${JSON.stringify(res.body)}`);
    },
    async newPartner(o = {}) {
      const res = await h.admin<{ id: string; secret: string }>('POST', '/admin/partners', {
        name: o.name ?? 'Test partner',
        ...o,
      });
      if (res.status !== 201)
        throw new Error(`newPartner answered ${res.status}: ${JSON.stringify(res.body)}`);
      return { id: res.body.id, secret: res.body.secret };
    },
    async waitForStatus(id, status, o = {}) {
      const deadline = Date.now() + (o.timeoutMs ?? 15_000);
      let last: Reply | undefined;
      while (Date.now() < deadline) {
        last = await h.call('get-order', { id }, o.creds ?? demo);
        if (last.body.status === status) return last;
        await new Promise((r) => setTimeout(r, 100));
      }
      throw new Error(`order ${id} did not reach ${status} in time; last seen ${JSON.stringify(last?.body)}`);
    },
    async listen() {
      await h.service.app.listen({ port: 0, host: '127.0.0.1' });
      const address = h.service.app.server.address();
      if (!address || typeof address === 'string') throw new Error('the service is not listening on TCP');
      return `http://127.0.0.1:${address.port}`;
    },
    async restart() {
      await h.service.stop();
      h.service = await start();
    },
    async close() {
      await h.service.stop();
      await db.drop();
      rmSync(dataDir, { recursive: true, force: true });
    },
  };
  return h;
}

/** A payment for confirm-order, paid now (by the real clock unless `paidAt` is given). */
export function payment(amount: number, over: Partial<Record<string, unknown>> = {}) {
  const n = Math.random().toString(36).slice(2, 10);
  return { receipt_id: `RRN${n}`, transaction_id: `TX${n}`, paid_at: Date.now(), amount, ...over };
}

export const RCA_QUOTE = { product: 'rca', vehicle: '100000001', duration: 365, idnx: '2003000000016' };
export const rcaItem = (start: string, over: Record<string, unknown> = {}) => ({
  product: 'rca',
  vehicle: '100000001',
  start_date: start,
  duration: 365,
  insurance_company: 'moldasig',
  idnx: '2003000000016',
  ...over,
});

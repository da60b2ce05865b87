import { mkdtempSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { signatureHeader } from '../../src/signature.ts';
import { testDatabaseUrl } from '../support/database.ts';
import {
  eventually,
  freePort,
  payment,
  rcaDraft,
  removeDataDir,
  sleep,
  spawnService,
  type ServiceProcess,
} from './process.ts';

interface Received {
  body: string;
  signature: string | undefined;
}

/** A partner's webhook endpoint: a real local HTTP server that records every request. */
async function webhookReceiver(): Promise<{ url: string; received: Received[]; close(): Promise<void> }> {
  const received: Received[] = [];
  const port = await freePort();
  const server: Server = createServer((req, res) => {
    let body = '';
    req.on('data', (d: Buffer) => (body += d.toString()));
    req.on('end', () => {
      received.push({ body, signature: req.headers['x-hmac-signature'] as string | undefined });
      res.writeHead(200, { 'content-type': 'application/json' }).end('{"ok":true}');
    });
  });
  await new Promise<void>((r) => server.listen(port, '127.0.0.1', r));
  return {
    url: `http://127.0.0.1:${port}/polita-webhook`,
    received,
    close: () => new Promise((r) => server.close(() => r())),
  };
}

const engines = [
  { engine: 'the embedded PostgreSQL of a DATA_DIR', postgres: false },
  { engine: 'a PostgreSQL server (DATABASE_URL)', postgres: true },
];

/**
 * A process killed with SIGKILL right after confirm-order answered: the order's place in the
 * issuance outbox was committed with the payment (its job too, if the process got that far), so the
 * restarted process issues the order and sends its webhook exactly once. On a DATA_DIR this also proves that the server the killed process left running is
 * taken over.
 */
describe.each(engines)('a service process killed after payment, on $engine', ({ postgres }) => {
  let env: Record<string, string>;
  let cleanup = async () => {};
  let hook: Awaited<ReturnType<typeof webhookReceiver>>;
  const procs: ServiceProcess[] = [];

  beforeAll(async () => {
    hook = await webhookReceiver();
    if (postgres) {
      const db = await testDatabaseUrl();
      env = { DATABASE_URL: db.url };
      cleanup = db.drop;
    } else {
      const dir = mkdtempSync(join(tmpdir(), 'polita-crash-'));
      env = { DATA_DIR: dir };
      cleanup = () => removeDataDir(dir);
    }
  });

  afterAll(async () => {
    await Promise.all(procs.map((p) => p.kill()));
    await hook?.close();
    await cleanup();
  }, 60_000);

  it('completes the order after a restart and sends its webhook exactly once', async () => {
    const first = await spawnService(env);
    procs.push(first);
    const patched = await first.admin('PATCH', '/admin/partners/demo', { webhook_url: hook.url });
    expect(patched.status, JSON.stringify(patched.body)).toBe(200);

    const draft = await rcaDraft(first);
    const confirmed = await first.call('confirm-order', { id: draft.id, payment: payment(draft.price) });
    expect(confirmed.status).toBe(200);
    await first.kill();
    expect(first.child.signalCode).toBe('SIGKILL');

    const restartedAt = Date.now();
    const second = await spawnService(env);
    procs.push(second);
    expect(second.demo.secret, 'the demo secret survives the restart').toBe(first.demo.secret);

    const done = await eventually(
      'the order to complete after the restart',
      async () => {
        const r = await second.call<{ status: string }>('get-order', { id: draft.id });
        return r.body.status === 'completed' ? r : undefined;
      },
      40_000,
    );
    expect(done.status).toBe(200);

    await eventually('the completion webhook', async () => (hook.received.length > 0 ? true : undefined));
    await sleep(1500); // a duplicate would arrive within this window
    const body = JSON.stringify({ orderId: draft.id, status: 'completed' });
    expect(hook.received).toEqual([{ body, signature: signatureHeader('demo', first.demo.secret, body) }]);

    const detail = await second.admin<{
      completed_at: string;
      webhook_attempts: { http_status: number | null }[];
      history: { to: string }[];
    }>('GET', `/admin/orders/${draft.id}`);
    // Completed by the restarted process, not by the killed one in the instant before the kill.
    expect(Date.parse(detail.body.completed_at)).toBeGreaterThanOrEqual(
      Math.floor(restartedAt / 1000) * 1000,
    );
    expect(detail.body.webhook_attempts).toEqual([expect.objectContaining({ http_status: 200 })]);
    expect(detail.body.history.map((e) => e.to)).toEqual(['draft', 'paid', 'completed']);
  }, 60_000);
});

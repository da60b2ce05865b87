import { spawn, type ChildProcess } from 'node:child_process';
import { createHmac } from 'node:crypto';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { startHarness, type Harness } from '../support/harness.ts';

/**
 * The README's quickstart as a new user runs it: examples/webhook-receiver.mjs verifying deliveries
 * with @polita/client, the operator's test event, then examples/quickstart.mjs from a quote to a
 * completed order, whose completed event the receiver verifies.
 */
let h: Harness;
let env: NodeJS.ProcessEnv;
const children: ChildProcess[] = [];

beforeAll(async () => {
  h = await startHarness();
  const url = await h.listen();
  env = {
    ...process.env,
    POLITA_URL: url,
    POLITA_PARTNER_ID: h.demo.id,
    POLITA_PARTNER_SECRET: h.demo.secret,
    RECEIVER_PORT: '0',
  };
});
afterAll(async () => {
  for (const c of children) c.kill();
  await h?.close();
});

/** Runs an example; `output()` is what it printed so far, `exited` its exit code. */
function example(file: string) {
  const child = spawn(process.execPath, [`examples/${file}`], { env, stdio: ['ignore', 'pipe', 'pipe'] });
  children.push(child);
  let out = '';
  child.stdout.on('data', (c: Buffer) => (out += c.toString()));
  child.stderr.on('data', (c: Buffer) => (out += c.toString()));
  const exited = new Promise<number | null>((resolve) => child.on('exit', resolve));
  return { output: () => out, exited };
}

async function until(what: string, f: () => RegExpMatchArray | null, ms = 20_000) {
  const deadline = Date.now() + ms;
  for (;;) {
    const m = f();
    if (m) return m;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

it('a receiver verifies the test event and the completed event of the quickstart order', async () => {
  const receiver = example('webhook-receiver.mjs');
  const [, url] = await until('the receiver', () => /receiving webhooks on (\S+)/.exec(receiver.output()));
  const patched = await h.admin('PATCH', `/admin/partners/${h.demo.id}`, { webhook_url: url });
  expect(patched.status, JSON.stringify(patched.body)).toBe(200);
  const test = await h.admin('POST', `/admin/partners/${h.demo.id}/webhook-test`);
  expect(test.body).toMatchObject({ delivered: true, httpStatus: 204 });
  await until('the test event', () => /test TST000000TST \(event evt_/.exec(receiver.output()));

  const quickstart = example('quickstart.mjs');
  expect(await quickstart.exited, quickstart.output()).toBe(0);
  const [, id] = /draft: +(\w+), /.exec(quickstart.output())!;
  expect(quickstart.output()).toMatch(/completed: http:\/\/polita\.test\/files\/[0-9a-f]{32}\.pdf/);
  await until('the completed event', () =>
    new RegExp(`completed ${id} \\(event evt_`).exec(receiver.output()),
  );
  expect(receiver.output()).not.toMatch(/refused/);
});

it('the receiver without the SDK verifies a test event and refuses a tampered one', async () => {
  const receiver = example('webhook-receiver-plain.mjs');
  const [, url] = await until('the receiver', () => /receiving webhooks on (\S+)/.exec(receiver.output()));
  const patched = await h.admin('PATCH', `/admin/partners/${h.demo.id}`, { webhook_url: url });
  expect(patched.status, JSON.stringify(patched.body)).toBe(200);
  const test = await h.admin('POST', `/admin/partners/${h.demo.id}/webhook-test`);
  expect(test.body).toMatchObject({ delivered: true, httpStatus: 204 });
  await until('the test event', () => /test TST000000TST \(event evt_/.exec(receiver.output()));

  const t = Math.floor(Date.now() / 1000);
  const body = '{"orderId":"X","status":"completed"}';
  const signed = createHmac('sha512', h.demo.secret).update(`${t}.evt_x.${body}`).digest('hex');
  const tampered = await fetch(url!, {
    method: 'POST',
    headers: { 'x-polita-signature': `t=${t},v2=${signed}`, 'x-polita-event-id': 'evt_x' },
    body: '{"orderId":"Y","status":"completed"}',
  });
  expect(tampered.status).toBe(400);
  await until('the refusal', () => /refused: no v2 signature matches/.exec(receiver.output()));
  // A genuine delivery replayed under a new event id (finding 8) is refused too.
  const replayed = await fetch(url!, {
    method: 'POST',
    headers: { 'x-polita-signature': `t=${t},v2=${signed}`, 'x-polita-event-id': 'evt_y' },
    body,
  });
  expect(replayed.status).toBe(400);
});

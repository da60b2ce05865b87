import { createHmac } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { verifyWebhook, WebhookVerificationError } from '../../sdk/src/index.ts';

/**
 * verifyWebhook against events signed here as decisions 0015 and 0045 describe the service's
 * delivery: X-Polita-Signature: t=<unix seconds>,v1=<hex HMAC-SHA512(secret, "<t>.<raw body>")>,
 * v2=<hex HMAC-SHA512(secret, "<t>.<event id>.<raw body>")>, one of each per valid secret during a
 * rotation, newest first.
 */
const SECRET = 'new-secret';
const OLD = 'old-secret';
const T = 1_800_000_000;
const NOW = T * 1000 + 5_000;
const BODY = '{"orderId":"IAI123456ABC","status":"completed"}';

const v1 = (secret: string, t: number, body: string | Buffer) =>
  createHmac('sha512', secret).update(`${t}.`).update(body).digest('hex');

const v2 = (secret: string, t: number, eventId: string, body: string | Buffer) =>
  createHmac('sha512', secret).update(`${t}.${eventId}.`).update(body).digest('hex');

function signed(
  body: string | Buffer = BODY,
  secrets = [SECRET],
  t = T,
  o: { v1Only?: boolean; eventId?: string } = {},
): Record<string, string> {
  const eventId = o.eventId ?? 'evt_1';
  const parts = [
    `t=${t}`,
    ...secrets.map((s) => `v1=${v1(s, t, body)}`),
    ...(o.v1Only ? [] : secrets.map((s) => `v2=${v2(s, t, eventId, body)}`)),
  ];
  return {
    'X-Polita-Event-Id': eventId,
    'X-Polita-Timestamp': String(t),
    'X-Polita-Signature': parts.join(','),
  };
}

const verify = (over: Partial<Parameters<typeof verifyWebhook>[0]> = {}) =>
  verifyWebhook({ body: BODY, headers: signed(), secret: SECRET, now: NOW, ...over });

function refused(over: Partial<Parameters<typeof verifyWebhook>[0]>, reason: RegExp): void {
  let err: unknown;
  try {
    verify(over);
  } catch (e) {
    err = e;
  }
  expect(err).toBeInstanceOf(WebhookVerificationError);
  expect((err as Error).message).toMatch(reason);
}

describe('verifyWebhook', () => {
  it('answers the event of a valid webhook', () => {
    expect(verify()).toEqual({
      orderId: 'IAI123456ABC',
      status: 'completed',
      eventId: 'evt_1',
      timestamp: T,
    });
  });

  it('takes the body as bytes and the headers in any case, or as a Headers instance', () => {
    const lower = Object.fromEntries(Object.entries(signed()).map(([k, v]) => [k.toLowerCase(), v]));
    expect(verify({ body: Buffer.from(BODY), headers: lower }).orderId).toBe('IAI123456ABC');
    expect(verify({ body: new TextEncoder().encode(BODY), headers: new Headers(signed()) }).eventId).toBe(
      'evt_1',
    );
    expect(verify({ now: new Date(NOW) }).timestamp).toBe(T);
  });

  it('verifies the raw bytes: a body with non-ASCII text and its own spacing', () => {
    const body = Buffer.from('{ "orderId": "IAI123456ABC",  "status": "failed", "note": "Ștefan" }');
    const event = verify({ body, headers: signed(body) });
    expect(event.status).toBe('failed');
  });

  it("accepts the operator's test event", () => {
    const body = '{"orderId":"TST000000TST","status":"test"}';
    expect(verify({ body, headers: signed(body) })).toMatchObject({
      orderId: 'TST000000TST',
      status: 'test',
    });
  });

  it('refuses a wrong secret', () => {
    refused({ secret: 'another' }, /No X-Polita-Signature v2 matches/);
  });

  it('refuses a tampered body', () => {
    refused({ body: BODY.replace('completed', 'refunded') }, /No X-Polita-Signature v2 matches/);
  });

  it('refuses a timestamp outside the tolerance, either way', () => {
    refused({ now: (T + 301) * 1000 }, /more than 300 s/);
    refused({ now: (T - 301) * 1000 }, /more than 300 s/);
    expect(verify({ now: (T + 300) * 1000 }).timestamp).toBe(T);
    refused({ now: (T + 61) * 1000, toleranceSeconds: 60 }, /more than 60 s/);
  });

  it('refuses a replay with the timestamp changed (the signature covers it)', () => {
    const headers = signed();
    const later = T + 1000;
    headers['X-Polita-Timestamp'] = String(later);
    headers['X-Polita-Signature'] = headers['X-Polita-Signature']!.replace(`t=${T}`, `t=${later}`);
    refused({ headers, now: later * 1000 }, /No X-Polita-Signature v2 matches/);
  });

  it('during a rotation accepts either secret among several v1 values', () => {
    const headers = signed(BODY, [SECRET, OLD]);
    expect(verify({ headers, secret: OLD }).orderId).toBe('IAI123456ABC');
    expect(verify({ headers, secret: SECRET }).orderId).toBe('IAI123456ABC');
    expect(verify({ headers: signed(BODY, [OLD]), secret: [SECRET, OLD] }).orderId).toBe('IAI123456ABC');
    refused({ headers, secret: ['x', 'y'] }, /No X-Polita-Signature v2 matches/);
  });

  it('refuses missing headers', () => {
    for (const name of ['X-Polita-Event-Id', 'X-Polita-Timestamp', 'X-Polita-Signature']) {
      const headers = signed();
      delete headers[name];
      refused({ headers }, /Missing/);
    }
  });

  it('refuses a malformed signature header', () => {
    const good = signed()['X-Polita-Signature']!;
    for (const bad of [
      'garbage',
      `v1=${v1(SECRET, T, BODY)}`,
      `t=${T}`,
      `t=${T},v1=abc`,
      `t=soon,v1=${v1(SECRET, T, BODY)}`,
      `t=${T},t=${T},${good.split(',')[1]}`,
      `t=${T},v2=abc`,
    ]) {
      refused({ headers: { ...signed(), 'X-Polita-Signature': bad } }, /Malformed/);
    }
  });

  it('refuses a timestamp header that differs from the signed one', () => {
    refused({ headers: { ...signed(), 'X-Polita-Timestamp': String(T + 1) } }, /does not match/);
  });

  it('refuses a signed body that is not an event', () => {
    for (const body of ['not json', '{"orderId":"IAI123456ABC"}', '{"status":"completed"}', '[]', 'null']) {
      refused({ body, headers: signed(body) }, /not JSON|no orderId and status/);
    }
  });

  it('finding 8: refuses a capture replayed under a new X-Polita-Event-Id (v2 covers the id)', () => {
    const headers = { ...signed(), 'X-Polita-Event-Id': 'evt_2' };
    refused(
      { headers, now: (T + 299) * 1000 },
      /No X-Polita-Signature v2 matches the secret and X-Polita-Event-Id/,
    );
  });

  it('requires v2 unless allowV1 is set, and then accepts v1 alone', () => {
    const headers = signed(BODY, [SECRET], T, { v1Only: true });
    refused({ headers }, /has no v2/);
    expect(verify({ headers, allowV1: true }).orderId).toBe('IAI123456ABC');
    // allowV1 still checks v1: a wrong secret or a tampered body is refused.
    refused({ headers, allowV1: true, secret: 'another' }, /No X-Polita-Signature v2 or v1 matches/);
    // A delivery with v2 is checked on v2 when allowV1 is set too.
    expect(verify({ allowV1: true }).eventId).toBe('evt_1');
  });

  it('needs a secret', () => {
    expect(() => verify({ secret: [] })).toThrow(TypeError);
  });
});

import { timestampedSignatureHeader } from '../../src/signature.ts';
import type { Creds, Harness } from './harness.ts';

/**
 * A signed /v1 POST, with an Idempotency-Key when `key` is given; the raw answer, bytes and headers.
 * A string body is sent as it is (to test bytes that are not what JSON.stringify would write).
 */
export function signedPost(h: Harness, endpoint: string, body: unknown, key?: string, creds: Creds = h.demo) {
  const payload = typeof body === 'string' ? body : JSON.stringify(body);
  return h.service.app.inject({
    method: 'POST',
    url: `/v1/${endpoint}`,
    headers: {
      'content-type': 'application/json',
      'x-polita-signature': timestampedSignatureHeader(creds.id, creds.secret, endpoint, payload),
      ...(key !== undefined ? { 'idempotency-key': key } : {}),
    },
    payload,
  });
}

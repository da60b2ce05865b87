import { createHash } from 'node:crypto';
import {
  claimKey,
  forgetKeysBefore,
  KEY_LIFETIME_MS,
  releaseKey,
  storeAnswer,
  type Claim,
} from '../db/repos/idempotency.ts';
import type { Services } from './services.ts';

/**
 * Idempotency keys on the partner's writes (decision 0006): the first request with a key stores
 * its answer; the same key with the same body gets that answer again and changes nothing; the same
 * key with another body, or while the first still runs, is refused. Keys belong to one partner and
 * live 24 h. An unexpected failure (500 without "[API]") is not stored, so a retry runs again.
 */
export const requestHash = (route: string, rawBody: Buffer): string =>
  createHash('sha256').update(route).update('\n').update(rawBody).digest('hex');

export async function beginIdempotent(
  svc: Services,
  k: { partnerId: string; key: string; requestHash: string },
): Promise<Claim> {
  return claimKey(svc.db, { ...k, at: new Date(await svc.clock.now()) });
}

export async function finishIdempotent(
  svc: Services,
  k: { partnerId: string; key: string; status: number; body: string },
): Promise<void> {
  const unexpected = k.status >= 500 && !k.body.includes('"message":"[API] ');
  if (unexpected) await releaseKey(svc.db, k);
  else await storeAnswer(svc.db, { ...k, at: new Date(await svc.clock.now()) });
}

/** Keys past their 24 h: part of the once-a-minute sweep. */
export async function forgetExpiredKeys(svc: Services): Promise<number> {
  return forgetKeysBefore(svc.db, new Date((await svc.clock.now()) - KEY_LIFETIME_MS));
}

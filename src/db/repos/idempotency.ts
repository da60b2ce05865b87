import { sql } from 'kysely';
import type { Db } from '../database.ts';

export const KEY_LIFETIME_MS = 24 * 60 * 60 * 1000;
/** A first request that has not answered in this long died with its process: a retry takes its key over. */
export const ABANDONED_AFTER_MS = 60_000;

/** A partner's idempotency key: the primary key of its row. */
export type IdempotencyKey = { partnerId: string; key: string };

export type Claim =
  | { state: 'claimed' }
  | { state: 'answered'; status: number; body: string }
  | { state: 'running' }
  | { state: 'other-body' };

/**
 * Claims `key` for a request, atomically across instances (the primary key decides): a new key, or
 * one older than 24 h, or one whose first request was abandoned with the same body, is this
 * request's to run; otherwise the stored answer, or why not.
 */
export async function claimKey(
  db: Db,
  k: IdempotencyKey & { requestHash: string; at: Date },
): Promise<Claim> {
  const expired = new Date(k.at.getTime() - KEY_LIFETIME_MS);
  const abandoned = new Date(k.at.getTime() - ABANDONED_AFTER_MS);
  const { rows } = await sql<{ claimed: boolean }>`
    insert into idempotency_keys (partner_id, key, request_hash, created_at)
    values (${k.partnerId}, ${k.key}, ${k.requestHash}, ${k.at})
    on conflict (partner_id, key) do update set
      request_hash = excluded.request_hash, created_at = excluded.created_at,
      completed_at = null, response_status = null, response_body = null
    where idempotency_keys.created_at < ${expired}
       or (idempotency_keys.completed_at is null and idempotency_keys.created_at < ${abandoned}
           and idempotency_keys.request_hash = excluded.request_hash)
    returning true as claimed`.execute(db);
  if (rows.length > 0) return { state: 'claimed' };
  const row = await db
    .selectFrom('idempotency_keys')
    .select(['request_hash', 'completed_at', 'response_status', 'response_body'])
    .where('partner_id', '=', k.partnerId)
    .where('key', '=', k.key)
    .executeTakeFirst();
  // Gone in between (its first request failed unexpectedly and let go): claim it afresh.
  if (!row) return claimKey(db, k);
  if (row.request_hash !== k.requestHash) return { state: 'other-body' };
  if (row.completed_at === null) return { state: 'running' };
  return { state: 'answered', status: row.response_status!, body: row.response_body! };
}

export async function storeAnswer(
  db: Db,
  k: IdempotencyKey & { status: number; body: string; at: Date },
): Promise<void> {
  await db
    .updateTable('idempotency_keys')
    .set({ completed_at: k.at, response_status: k.status, response_body: k.body })
    .where('partner_id', '=', k.partnerId)
    .where('key', '=', k.key)
    .execute();
}

/** An unexpected failure is not an answer: the key is let go, so a retry runs again. */
export async function releaseKey(db: Db, k: IdempotencyKey): Promise<void> {
  await db
    .deleteFrom('idempotency_keys')
    .where('partner_id', '=', k.partnerId)
    .where('key', '=', k.key)
    .execute();
}

export async function forgetKeysBefore(db: Db, before: Date): Promise<number> {
  const res = await db.deleteFrom('idempotency_keys').where('created_at', '<', before).executeTakeFirst();
  return Number(res.numDeletedRows);
}

import { sql } from 'kysely';
import type { Db } from '../database.ts';

/**
 * Failed portal sign-ins (decision 0039), one row each, read by every instance: the times of the
 * newest `limit` failures since `since` from an address, and from the address for one email.
 */
export async function recentFailures(
  db: Db,
  f: { address: string; emailSha256: string; since: Date; perAddress: number; perEmail: number },
): Promise<{ address: Date[]; email: Date[] }> {
  const newest = (email: boolean, limit: number) => {
    let q = db
      .selectFrom('portal_sign_in_failures')
      .select('at')
      .where('address', '=', f.address)
      .where('at', '>', f.since);
    if (email) q = q.where('email_sha256', '=', f.emailSha256);
    return q
      .orderBy('at', 'desc')
      .limit(limit)
      .execute()
      .then((rows) => rows.map((r) => r.at));
  };
  const [address, email] = await Promise.all([newest(false, f.perAddress), newest(true, f.perEmail)]);
  return { address, email };
}

/**
 * An attempt counted before its password is checked (decision 0085): under a lock on the address,
 * the recent failures are read and, when neither limit is reached, the attempt is recorded as a
 * failure at once; a right password then clears it. Attempts sent at once are so counted one after
 * another, exactly as attempts sent one by one. Answers the failures that count when a limit is
 * reached (nothing recorded), or undefined when the attempt may go on.
 */
export async function countAttempt(
  db: Db,
  f: { address: string; emailSha256: string; since: Date; perAddress: number; perEmail: number; at: Date },
): Promise<{ address: Date[]; email: Date[] } | undefined> {
  return db.transaction().execute(async (trx) => {
    await sql`select pg_advisory_xact_lock(hashtext(${`portal-sign-in:${f.address}`}))`.execute(trx);
    const recent = await recentFailures(trx, f);
    if (recent.address.length >= f.perAddress || recent.email.length >= f.perEmail) return recent;
    await trx
      .insertInto('portal_sign_in_failures')
      .values({ address: f.address, email_sha256: f.emailSha256, at: f.at })
      .execute();
    return undefined;
  });
}

/** Forgets every failure older than `before` (of no use to any limit). */
export async function forgetOldFailures(db: Db, before: Date): Promise<void> {
  await db.deleteFrom('portal_sign_in_failures').where('at', '<', before).execute();
}

/** A success forgets the address's failures for that email (not the address's others). */
export async function clearFailures(db: Db, address: string, emailSha256: string): Promise<void> {
  await db
    .deleteFrom('portal_sign_in_failures')
    .where('address', '=', address)
    .where('email_sha256', '=', emailSha256)
    .execute();
}

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

/** Records a failure, and forgets every failure older than `before` (of no use to any limit). */
export async function recordFailure(
  db: Db,
  f: { address: string; emailSha256: string; at: Date; before: Date },
): Promise<void> {
  await db
    .insertInto('portal_sign_in_failures')
    .values({ address: f.address, email_sha256: f.emailSha256, at: f.at })
    .execute();
  await db.deleteFrom('portal_sign_in_failures').where('at', '<', f.before).execute();
}

/** A success forgets the address's failures for that email (not the address's others). */
export async function clearFailures(db: Db, address: string, emailSha256: string): Promise<void> {
  await db
    .deleteFrom('portal_sign_in_failures')
    .where('address', '=', address)
    .where('email_sha256', '=', emailSha256)
    .execute();
}

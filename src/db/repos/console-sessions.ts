import type { Selectable } from 'kysely';
import type { ConsoleSessionsTable, OperatorRole, Db } from '../schema.ts';

export type ConsoleSessionRow = Selectable<ConsoleSessionsTable>;

/** Console sign-ins, keyed by the SHA-256 of the cookie's random id (the id itself is never stored). */
export async function insertSession(
  db: Db,
  s: {
    idSha256: string;
    actor: string;
    actorName: string;
    role: OperatorRole;
    csrfToken: string;
    /** SHA-256 of the token the session was opened with. */
    tokenSha256: string;
    at: Date;
  },
): Promise<void> {
  await db
    .insertInto('console_sessions')
    .values({
      id_sha256: s.idSha256,
      actor: s.actor,
      actor_name: s.actorName,
      role: s.role,
      csrf_token: s.csrfToken,
      token_sha256: s.tokenSha256,
      created_at: s.at,
      last_seen_at: s.at,
    })
    .execute();
}

/**
 * A session seen since `idleSince`, with whether its operator has been disabled since (the service's
 * own admin token has no operator row, and is never disabled) and the SHA-256 of the operator's
 * token now (null for the admin token, whose hash the caller knows).
 */
export async function findLiveSession(
  db: Db,
  idSha256: string,
  idleSince: Date,
): Promise<
  (ConsoleSessionRow & { operator_disabled: boolean; operator_token_sha256: string | null }) | undefined
> {
  const row = await db
    .selectFrom('console_sessions as s')
    .leftJoin('operators as o', 'o.id', 's.actor')
    .selectAll('s')
    .select(['o.disabled_at as operator_disabled_at', 'o.token_sha256 as operator_token_sha256'])
    .where('s.id_sha256', '=', idSha256)
    .where('s.last_seen_at', '>=', idleSince)
    .executeTakeFirst();
  if (!row) return undefined;
  const { operator_disabled_at, operator_token_sha256, ...session } = row;
  return {
    ...session,
    operator_disabled: operator_disabled_at !== null,
    operator_token_sha256: operator_token_sha256 ?? null,
  };
}

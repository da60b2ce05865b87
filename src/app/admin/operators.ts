import { timingSafeEqual } from 'node:crypto';
import { badRequest, notFound } from '../../domain/errors.ts';
import { isoLocal } from '../../domain/time.ts';
import { insertAudit, listAudit } from '../../db/repos/audit.ts';
import {
  changeEnabledOperator,
  insertOperator,
  listOperators as listOperatorRows,
  operatorByTokenHash,
  type OperatorRow,
} from '../../db/repos/operators.ts';
import type { OperatorRole } from '../../db/schema.ts';
import { tokenHash } from '../../secrets/secret-box.ts';
import { audit, type Actor, type OperatorActor } from '../actor.ts';
import type { Services } from '../services.ts';

export const ROLES: readonly OperatorRole[] = ['admin', 'support'];

/** The service's own token (ADMIN_TOKEN, or the sandbox's generated one): an admin. */
export const ADMIN_TOKEN_ACTOR = { id: 'admin-token', name: 'Admin token', role: 'admin' } as const;

/** An operator as its token names it; the caller says through what it acts (`operatorActor`). */
export type Operator = Omit<OperatorActor, 'kind' | 'via'>;

/**
 * The operator holding `token`: the service's admin token (compared as SHA-256 digests in constant
 * time), or an enabled operator's token; undefined for any other.
 */
export async function authenticateOperator(
  svc: Services,
  token: string,
  adminToken: string,
): Promise<Operator | undefined> {
  const given = tokenHash(token);
  if (timingSafeEqual(Buffer.from(given, 'hex'), Buffer.from(tokenHash(adminToken), 'hex'))) {
    return ADMIN_TOKEN_ACTOR;
  }
  const op = await operatorByTokenHash(svc.db, given);
  return op && { id: op.id, name: op.name, role: op.role };
}

/**
 * A wrong operator token, in the audit log (decision 0046): who tried from where and on what, never
 * the token. `limitedAt`: the address is past its limit, which this one entry a minute says.
 */
export async function auditFailedOperatorAuth(
  svc: Services,
  f: { address: string; route: string; method: string; via: 'api' | 'console'; limitedAt?: number },
): Promise<void> {
  await insertAudit(svc.db, {
    at: new Date(),
    actor: 'unauthenticated',
    role: 'none',
    via: f.via,
    action: f.limitedAt === undefined ? 'operator.auth_failed' : 'operator.auth_limited',
    target: f.address,
    before: null,
    after: {
      address: f.address,
      route: f.route,
      method: f.method,
      ...(f.limitedAt === undefined ? {} : { per_minute: f.limitedAt }),
    },
  });
}

const operatorView = (o: OperatorRow) => ({
  id: o.id,
  name: o.name,
  role: o.role,
  created_at: isoLocal(o.created_at.getTime()),
  disabled_at: o.disabled_at ? isoLocal(o.disabled_at.getTime()) : null,
});

const newOperatorToken = (svc: Services) => `pol_${Buffer.from(svc.randomBytes(24)).toString('base64url')}`;

/** A new operator token with a role; the token is shown here only, the service keeps its hash. */

export async function createOperator(svc: Services, actor: Actor, input: { name: string; role: string }) {
  if (!(ROLES as readonly string[]).includes(input.role)) {
    throw badRequest(`role must be one of: ${ROLES.join(', ')}`);
  }
  const name = input.name.trim();
  if (name.length === 0 || name.length > 200) throw badRequest('name must be 1 to 200 characters');
  const id = `op_${Buffer.from(svc.randomBytes(6)).toString('hex')}`;
  const token = newOperatorToken(svc);
  const at = new Date(await svc.clock.now());
  const row = await svc.db.transaction().execute(async (trx) => {
    const created = await insertOperator(trx, {
      id,
      name,
      role: input.role as OperatorRole,
      token_sha256: tokenHash(token),
      created_at: at,
    });
    await audit(trx, actor, { action: 'operator.create', target: id, after: operatorView(created), at });
    return created;
  });
  return { ...operatorView(row), token };
}

export async function listOperators(svc: Services) {
  return { operators: (await listOperatorRows(svc.db)).map(operatorView) };
}

/**
 * A new token for an enabled operator, shown once: the old token opens nothing from then on, and the
 * console sessions opened with it end (decision 0047). The operator keeps its id, name and role, so
 * the audit log reads on as one person.
 */
export async function rotateOperatorToken(svc: Services, actor: Actor, id: string) {
  const token = newOperatorToken(svc);
  const at = new Date(await svc.clock.now());
  const row = await svc.db.transaction().execute(async (trx) => {
    const rotated = await changeEnabledOperator(trx, id, { token_sha256: tokenHash(token) });
    if (!rotated) throw notFound('Operator not found or disabled');
    await audit(trx, actor, { action: 'operator.rotate_token', target: id, at });
    return rotated;
  });
  return { ...operatorView(row), token };
}

/** Disables an operator's token at once; the row stays, for the audit log's sake. */
export async function disableOperator(svc: Services, actor: Actor, id: string) {
  const at = new Date(await svc.clock.now());
  return svc.db.transaction().execute(async (trx) => {
    const row = await changeEnabledOperator(trx, id, { disabled_at: at });
    if (!row) throw notFound('Operator not found or already disabled');
    const view = operatorView(row);
    await audit(trx, actor, {
      action: 'operator.disable',
      target: id,
      before: { ...view, disabled_at: null },
      after: view,
      at,
    });
    return view;
  });
}

/** The audit log, newest first, cursor-paged; optionally one actor's or one target's entries. */
export async function auditLog(
  svc: Services,
  q: { limit?: number; cursor?: string; actor?: string; target?: string },
) {
  const limit = q.limit ?? 50;
  const beforeId = q.cursor === undefined ? undefined : Number(q.cursor);
  if (beforeId !== undefined && !(Number.isSafeInteger(beforeId) && beforeId > 0)) {
    throw badRequest('cursor is not valid');
  }
  const rows = await listAudit(svc.db, {
    limit: limit + 1,
    ...(beforeId !== undefined ? { beforeId } : {}),
    ...(q.actor ? { actor: q.actor } : {}),
    ...(q.target ? { target: q.target } : {}),
  });
  const page = rows.slice(0, limit);
  return {
    entries: page.map((r) => ({
      id: r.id,
      at: isoLocal(r.at.getTime()),
      actor: r.actor,
      role: r.role,
      via: r.via,
      action: r.action,
      target: r.target,
      before: r.before,
      after: r.after,
    })),
    next_cursor: rows.length > limit ? String(page.at(-1)!.id) : null,
  };
}

import { insertAudit } from '../db/repos/audit.ts';
import type { Db, OperatorRole, PortalRole } from '../db/schema.ts';

/**
 * Who acts (decision 0099): every use case that records an action in the audit log takes its actor
 * as an argument, and its caller says who that is. The operator API, the console and the command
 * line pass the operator; the portal its signed-in user; `/v1` the partner; jobs and start-up the
 * service itself.
 */
export type Actor = OperatorActor | PortalActor | PartnerActor | SystemActor;

/** An operator (the service's own admin token, or an operator token with a role) and through what. */
export interface OperatorActor {
  kind: 'operator';
  id: string;
  name: string;
  role: OperatorRole;
  via: 'api' | 'cli' | 'console';
}

/**
 * A partner's portal user acting in the portal (src/portal): the audit log names the user and the
 * partner in `actor` (`portal:<partner id>:<email>`), so every reader of the log (the console's
 * audit page, `GET /admin/audit`, the command line) shows both without looking anything up.
 */
export interface PortalActor {
  kind: 'portal';
  id: string;
  name: string;
  role: PortalRole;
  via: 'portal';
  userId: string;
  partnerId: string;
}

/** A partner through its signed API (`/v1`). */
export interface PartnerActor {
  kind: 'partner';
  id: string;
  role: 'partner';
  via: 'api';
  partnerId: string;
}

/** The service itself: start-up seeding and background jobs. */
export interface SystemActor {
  kind: 'system';
  id: 'system';
  name: 'System';
  role: 'admin';
  via: 'system';
}

export const SYSTEM_ACTOR: SystemActor = {
  kind: 'system',
  id: 'system',
  name: 'System',
  role: 'admin',
  via: 'system',
};

/** The audit log's actor of a portal user. */
export const portalActorId = (partnerId: string, email: string) => `portal:${partnerId}:${email}`;

/** A partner acting through `/v1`: `partner:<id>` in the audit log, the order's history and its refund. */
export const partnerActor = (partnerId: string): PartnerActor => ({
  kind: 'partner',
  id: `partner:${partnerId}`,
  role: 'partner',
  via: 'api',
  partnerId,
});

/** An operator acting through `via`. */
export const operatorActor = (
  operator: { id: string; name: string; role: OperatorRole },
  via: OperatorActor['via'],
): OperatorActor => ({ kind: 'operator', id: operator.id, name: operator.name, role: operator.role, via });

/**
 * Records a state-changing action of `actor` in the audit log, in the caller's transaction when it
 * has one (so the entry exists iff the change commits). `before` is null for a creation.
 */
export async function audit(
  db: Db,
  actor: Actor,
  e: { action: string; target: string | null; before?: unknown; after?: unknown; at: Date },
): Promise<void> {
  await insertAudit(db, {
    at: e.at,
    actor: actor.id,
    role: actor.role,
    via: actor.via,
    action: e.action,
    target: e.target,
    before: e.before ?? null,
    after: e.after ?? null,
  });
}

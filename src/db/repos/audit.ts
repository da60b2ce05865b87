import type { Selectable } from 'kysely';
import type { AuditLogTable, Db } from '../schema.ts';

export type AuditRow = Selectable<AuditLogTable>;

export interface AuditEntry {
  at: Date;
  actor: string;
  role: AuditLogTable['role'];
  via: AuditLogTable['via'];
  action: string;
  target: string | null;
  before: unknown;
  after: unknown;
}

export async function insertAudit(db: Db, e: AuditEntry): Promise<void> {
  const json = (v: unknown) => (v === undefined || v === null ? null : JSON.stringify(v));
  await db
    .insertInto('audit_log')
    .values({
      at: e.at,
      actor: e.actor,
      role: e.role,
      via: e.via,
      action: e.action,
      target: e.target,
      before: json(e.before),
      after: json(e.after),
    })
    .execute();
}

/** Newest first, keyset-paged by id; optionally one actor's or one target's entries. */
export async function listAudit(
  db: Db,
  f: { limit: number; beforeId?: number; actor?: string; target?: string },
): Promise<AuditRow[]> {
  let q = db.selectFrom('audit_log').selectAll();
  if (f.beforeId !== undefined) q = q.where('id', '<', f.beforeId);
  if (f.actor) q = q.where('actor', '=', f.actor);
  if (f.target) q = q.where('target', '=', f.target);
  return q.orderBy('id', 'desc').limit(f.limit).execute();
}

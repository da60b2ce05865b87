/** An entry of the operator's audit log as GET /admin/audit lists it. */
export interface AuditEntry {
  actor: string;
  role: string;
  via: string;
  action: string;
  target: string | null;
  before: unknown;
  after: unknown;
}

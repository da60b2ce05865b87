import { sql, type Kysely } from 'kysely';

export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`
-- Operators beside the service's own admin token: each a token (kept as its SHA-256 only) and a
-- role. admin: everything; support: read, and re-send webhooks.
create table operators (
  id text primary key check (id ~ '^op_[a-z0-9]{6,32}$'),
  name text not null check (length(name) between 1 and 200),
  role text not null check (role in ('admin', 'support')),
  token_sha256 text not null unique,
  created_at timestamptz not null,
  disabled_at timestamptz
);

-- Every state-changing operator action (API, command line, console): who, when, what, before, after.
create table audit_log (
  id bigserial primary key,
  at timestamptz not null,
  actor text not null,
  role text not null,
  via text not null check (via in ('api', 'cli', 'console', 'system')),
  action text not null,
  target text,
  before jsonb,
  after jsonb
);
create index audit_log_target on audit_log (target, id);
create index audit_log_actor on audit_log (actor, id);

-- Console sign-ins: the cookie holds a random id, the table its SHA-256; 12 h idle ends a session.
create table console_sessions (
  id_sha256 text primary key,
  actor text not null,
  role text not null check (role in ('admin', 'support')),
  csrf_token text not null,
  created_at timestamptz not null,
  last_seen_at timestamptz not null
);
create index console_sessions_seen on console_sessions (last_seen_at);
`.execute(db);
}

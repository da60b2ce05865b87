import { sql, type Kysely } from 'kysely';

export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`
-- The partner portal (decision 0037): a partner's own people, each with one role, invited by the
-- operator or by an owner. The address is kept as typed and is unique across the service compared
-- lowercased: one address, one user, one partner.
create table portal_users (
  id text primary key check (id ~ '^usr_[a-z0-9]{12,32}$'),
  partner_id text not null references partners(id),
  email text not null check (length(email) between 3 and 254),
  role text not null check (role in ('owner', 'developer', 'cashier', 'accountant')),
  -- scrypt, with its parameters and salt (decision 0038); null until an invitation is accepted.
  password_hash text,
  created_at timestamptz not null,
  disabled_at timestamptz
);
create unique index portal_users_email on portal_users (lower(email));
create index portal_users_partner on portal_users (partner_id, created_at);

-- An invitation link: the table keeps the SHA-256 of its token, never the token. Usable once,
-- until expires_at (72 h after it was made, by the real clock).
create table portal_invitations (
  token_sha256 text primary key,
  user_id text not null references portal_users(id),
  created_at timestamptz not null,
  expires_at timestamptz not null,
  used_at timestamptz
);
create index portal_invitations_user on portal_invitations (user_id);

-- Portal sign-ins, as the console's: the cookie holds a random id, the table its SHA-256, and the
-- secret the session's CSRF tokens are made from and checked against.
create table portal_sessions (
  id_sha256 text primary key,
  user_id text not null references portal_users(id),
  csrf_secret text not null,
  created_at timestamptz not null,
  last_seen_at timestamptz not null
);
create index portal_sessions_user on portal_sessions (user_id);
create index portal_sessions_seen on portal_sessions (last_seen_at);

-- Failed sign-ins, one row each, counted per client address and per address and email by every
-- instance (decision 0039). The email only as its SHA-256. Unlogged, as rate_limit_counters: the
-- counts are worth nothing after a crash.
create unlogged table portal_sign_in_failures (
  id bigserial primary key,
  address text not null,
  email_sha256 text not null,
  at timestamptz not null
);
create index portal_sign_in_failures_address on portal_sign_in_failures (address, at);
create index portal_sign_in_failures_at on portal_sign_in_failures (at);

-- Portal users act too: the audit log says so (via portal, the user and the partner in actor).
alter table audit_log drop constraint audit_log_via_check;
alter table audit_log add constraint audit_log_via_check
  check (via in ('api', 'cli', 'console', 'system', 'portal'));

-- A rotation keeps the previous secret 24 h, no longer until it is retired by hand (decision 0040):
-- its end is written in retired_at, ahead of the clock. Secrets left valid by rotations made before
-- this version get their 24 h from the upgrade.
update partner_secrets s set retired_at = now() + interval '24 hours'
  where s.retired_at is null
  and exists (select 1 from partner_secrets n where n.partner_id = s.partner_id and n.id > s.id and n.retired_at is null);
`.execute(db);
}

/**
 * Forward-only migrations. Never edit one that has shipped: add the next. They stay within
 * PostgreSQL 15's SQL: the embedded server is 15, and operators may run 15 themselves.
 */
export interface Migration {
  version: number;
  name: string;
  sql: string;
}

export const migrations: Migration[] = [
  {
    version: 1,
    name: 'foundation',
    sql: `
create table settings (
  key text primary key,
  value jsonb not null,
  updated_at timestamptz not null
);

create table partners (
  id text primary key check (id ~ '^[a-z0-9][a-z0-9_-]{1,63}$'),
  name text not null check (length(name) between 1 and 200),
  webhook_url text,
  disabled boolean not null default false,
  -- Partner margin in basis points, added to every offer price (final prices include it).
  margin_bp integer not null default 0 check (margin_bp between 0 and 10000),
  created_at timestamptz not null,
  updated_at timestamptz not null
);

create table partner_secrets (
  id bigserial primary key,
  partner_id text not null references partners(id),
  -- Kept in clear: HMAC verification needs the key itself.
  secret text not null,
  created_at timestamptz not null,
  retired_at timestamptz
);
create index partner_secrets_active on partner_secrets (partner_id) where retired_at is null;

create table orders (
  id text primary key check (id ~ '^[A-Z]{3}[0-9]{6}[A-Z]{3}$'),
  partner_id text not null references partners(id),
  status text not null check (status in ('draft','paid','processing','failed','completed','refunded','expired')),
  description text not null,
  price bigint not null check (price >= 0),
  currency text not null default 'MDL' check (currency = 'MDL'),
  start_date text,
  end_date text,
  customer jsonb not null,
  created_at timestamptz not null,
  expires_at timestamptz not null,
  paid_at timestamptz,
  payment_method text check (payment_method in ('customer','wallet')),
  payment jsonb,
  completed_at timestamptz,
  updated_at timestamptz not null,
  check ((status in ('draft','expired')) = (payment_method is null))
);
create index orders_partner_created on orders (partner_id, created_at desc, id desc);
create index orders_created on orders (created_at desc, id desc);
create index orders_open_drafts on orders (expires_at) where status = 'draft';

create table order_items (
  order_id text not null references orders(id),
  idx integer not null check (idx between 0 and 9),
  product text not null,
  price bigint not null check (price >= 0),
  description text not null,
  start_date text,
  end_date text,
  -- The validated request and everything resolved while pricing it (vehicle, tariff, rates).
  details jsonb not null,
  -- The issued product's wire fields, without file; null until issued.
  issued jsonb,
  file_token text unique,
  primary key (order_id, idx)
);

-- The order state machine, mirrored from domain/order-state.ts TRANSITIONS.
create table order_events (
  id bigserial primary key,
  order_id text not null references orders(id),
  from_status text,
  to_status text not null,
  reason text,
  actor text not null,
  at timestamptz not null,
  check (
    (from_status is null and to_status = 'draft') or
    (from_status = 'draft' and to_status in ('paid','expired')) or
    (from_status = 'paid' and to_status in ('processing','completed','failed')) or
    (from_status = 'processing' and to_status in ('completed','failed')) or
    (from_status = 'failed' and to_status = 'refunded') or
    (from_status = 'completed' and to_status = 'refunded')
  )
);
create index order_events_order on order_events (order_id, id);

create table documents (
  token text primary key check (length(token) >= 32),
  order_id text not null references orders(id),
  idx integer not null,
  pdf bytea not null,
  created_at timestamptz not null
);

create table wallets (
  partner_id text primary key references partners(id),
  online bigint not null default 0 check (online >= 0),
  insurance bigint not null default 0 check (insurance >= 0),
  promo bigint not null default 0 check (promo >= 0),
  updated_at timestamptz not null
);

-- Append-only: the sub-wallet balances always equal the sum of their entries.
create table ledger_entries (
  id bigserial primary key,
  partner_id text not null references wallets(partner_id),
  wallet text not null check (wallet in ('online','insurance','promo')),
  amount bigint not null check (amount <> 0),
  balance_after bigint not null check (balance_after >= 0),
  kind text not null check (kind in ('credit','payment','refund')),
  order_id text references orders(id),
  reference text,
  actor text not null,
  created_at timestamptz not null
);
create unique index ledger_credit_reference on ledger_entries (partner_id, reference) where kind = 'credit';
create index ledger_partner on ledger_entries (partner_id, id);

create table webhook_attempts (
  id bigserial primary key,
  order_id text not null references orders(id),
  url text,
  trigger text not null check (trigger in ('completion','operator')),
  attempted_at timestamptz not null,
  http_status integer,
  error text,
  latency_ms integer not null
);
create index webhook_attempts_order on webhook_attempts (order_id, id);
`,
  },
  {
    version: 2,
    name: 'refunds',
    sql: `
-- One refund per order. A wallet-paid order is credited back at once (settled, with its ledger
-- entry); a customer-paid one waits for the operator to return the money (to_settle).
create table refunds (
  order_id text primary key references orders(id),
  method text not null check (method in ('customer','wallet')),
  amount bigint not null check (amount >= 0),
  status text not null check (status in ('to_settle','settled')),
  reason text not null,
  actor text not null,
  ledger_entry_id bigint references ledger_entries(id),
  created_at timestamptz not null,
  settled_at timestamptz,
  check (method = 'customer' or status = 'settled')
);
create index refunds_to_settle on refunds (created_at) where status = 'to_settle';
`,
  },
  {
    version: 3,
    name: 'order events check without null holes',
    sql: `
-- Migration 1's check let (null → any status) through: from_status = 'draft' is null when
-- from_status is null, and a check that evaluates to null passes. Same table, no null branch.
alter table order_events drop constraint order_events_check;
alter table order_events add constraint order_events_transition check (
  case
    when from_status is null then to_status = 'draft'
    else (from_status = 'draft' and to_status in ('paid','expired')) or
      (from_status = 'paid' and to_status in ('processing','completed','failed')) or
      (from_status = 'processing' and to_status in ('completed','failed')) or
      (from_status = 'failed' and to_status = 'refunded') or
      (from_status = 'completed' and to_status = 'refunded')
  end
);
`,
  },
  {
    version: 4,
    name: 'refusals raised from a statement',
    sql: `
-- A statement refuses (and so rolls back everything it and its transaction did) by calling this
-- in a CASE: the wallet payment books and commits in one message, and a payment no sub-wallet
-- covers must not commit the rest of its transaction. Volatile, so it is never folded early.
-- (The body on one line: the runner splits statements at a semicolon that ends a line.)
create function polita_refuse(reason text) returns boolean language plpgsql volatile as $$
begin raise exception '%', reason using errcode = 'P0001'; end
$$;
`,
  },
  {
    version: 5,
    name: 'partner secrets encrypted at rest',
    sql: `
-- Partner secrets are stored encrypted (AES-256-GCM under SECRET_KEY, src/secrets/secret-box.ts):
-- secret_enc is 'v1:<key id>:<iv>:<tag>:<ciphertext>'. The key never reaches the database, so the
-- rows still in clear are encrypted by the service at start (src/secrets/at-rest.ts), which then
-- sets their secret to null; new rows are written encrypted only. Exactly one of the two is set.
alter table partner_secrets add column secret_enc text;
alter table partner_secrets alter column secret drop not null;
alter table partner_secrets add constraint partner_secrets_one_form check (num_nonnulls(secret, secret_enc) = 1);
`,
  },
  {
    version: 6,
    name: 'rate limits',
    sql: `
-- A partner's requests a minute on /v1; null: the service's RATE_LIMIT_PER_MINUTE.
alter table partners add column rate_limit_per_minute integer
  check (rate_limit_per_minute is null or rate_limit_per_minute between 1 and 1000000);
-- Request counts per key and fixed window, added to by every instance a few times a second.
-- Unlogged: counts are worth nothing after a crash, and the table takes many small writes.
create unlogged table rate_limit_counters (
  key text not null,
  window_start timestamptz not null,
  count integer not null,
  primary key (key, window_start)
);
`,
  },
  {
    version: 7,
    name: 'idempotency keys',
    sql: `
-- The answer to a partner's write sent with an Idempotency-Key, kept 24 h: a retry with the same key
-- and body gets it again. completed_at is null while the first request runs.
create table idempotency_keys (
  partner_id text not null references partners(id),
  key text not null,
  request_hash text not null,
  created_at timestamptz not null,
  completed_at timestamptz,
  response_status integer,
  response_body text,
  primary key (partner_id, key)
);
create index idempotency_keys_created on idempotency_keys (created_at);
`,
  },
  {
    version: 8,
    name: 'failure reasons',
    sql: `
-- Why a failed or refunded order is so, in a sentence for a person (get-order shows it).
alter table orders add column failure_reason text;
`,
  },
  {
    version: 9,
    name: 'webhook events',
    sql: `
-- Which order events a partner's webhook receives beside completed (always sent).
alter table partners add column webhook_events text[] not null default '{completed}'
  check (webhook_events <@ array['completed','failed','refunded','expired']::text[]
         and 'completed' = any(webhook_events));

-- One row per event (a transition into completed, failed, refunded or expired), delivered at least
-- once. state: waiting (behind an earlier event of the same order), pending (a delivery job exists),
-- delivered, failed (the retry schedule ran out). Events of one order are delivered in seq order.
create table webhook_events (
  seq bigserial primary key,
  id text not null unique,
  partner_id text not null references partners(id),
  order_id text not null references orders(id),
  status text not null check (status in ('completed','failed','refunded','expired')),
  body text not null,
  state text not null check (state in ('waiting','pending','delivered','failed')),
  attempts integer not null default 0,
  created_at timestamptz not null,
  next_attempt_at timestamptz,
  settled_at timestamptz,
  unique (order_id, status)
);
create index webhook_events_open on webhook_events (order_id, seq) where state in ('waiting','pending');
create index webhook_events_partner on webhook_events (partner_id, seq);

alter table webhook_attempts add column event_id text references webhook_events(id);
alter table webhook_attempts add column attempt integer;
alter table webhook_attempts drop constraint webhook_attempts_trigger_check;
alter table webhook_attempts add constraint webhook_attempts_trigger_check
  check (trigger in ('completion','automatic','operator'));
`,
  },
  {
    version: 10,
    name: 'operators, audit log, console sessions',
    sql: `
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
`,
  },
  {
    version: 11,
    name: 'console sessions: the operator name',
    sql: `
-- The console shows who is signed in: the operator's name as it was at sign-in (the admin token's
-- actor has no row in operators to read it from).
alter table console_sessions add column actor_name text not null default ''
  check (length(actor_name) <= 200);
`,
  },
  {
    version: 12,
    name: 'policy PDFs stored without pglz',
    sql: `
-- A policy PDF is deflated already. Stored as 'extended', PostgreSQL ran pglz over most of each one
-- before giving up on it, for the same bytes on disk as 'external' (out of line, uncompressed):
-- decision 0029. New rows only, none is rewritten.
alter table documents alter column pdf set storage external;
`,
  },
  {
    version: 13,
    name: 'issuance outbox',
    sql: `
-- A paid order waiting for its issue-order job: written by the statement (or transaction) that
-- moves the order to paid, taken in batches by the outbox's dispatcher, which creates the jobs and
-- deletes the rows in one transaction. One pg-boss insert per payment (twelve partial indexes, two
-- deferred foreign keys, a round trip) was a large share of a wallet payment's cost: decision 0024.
-- No foreign key: the row lives milliseconds, is written beside the order's own update, and a
-- check on every payment would cost more than the table.
create table issuance_outbox (
  order_id text primary key,
  queued_at timestamptz not null
);
`,
  },
  {
    version: 14,
    name: 'webhook outbox',
    sql: `
-- The pending event of an order that issuance completed, waiting for its first deliver-webhook
-- job: written by the statement that completes the order, taken in batches like the issuance
-- outbox, so that the job's pg-boss insert and a transaction around it cost an issued order no round
-- trips (decision 0025). No foreign key, as for issuance_outbox.
create table webhook_outbox (
  event_id text primary key,
  partner_id text not null,
  queued_at timestamptz not null
);
`,
  },
  {
    version: 15,
    name: 'hash indexes for reads by order id',
    sql: `
-- get-order reads the orders of one turn by id (id = any($1)) and each one's items by order_id. A
-- b-tree grows a level as the table grows, and each id descends both trees. A hash index finds a
-- key in one bucket page at any size (decision 0028, npm run bench:reads). The primary keys stay:
-- only a b-tree enforces uniqueness and keeps the (order_id, idx) order.
-- 'if not exists': an operator may build them beforehand with create index concurrently under the
-- same names; otherwise writes to both tables wait for the build.
create index if not exists orders_id_hash on orders using hash (id);
create index if not exists order_items_order_hash on order_items using hash (order_id);
`,
  },
  {
    version: 16,
    name: 'partner portal',
    sql: `
-- The partner portal (decision 0034): a partner's own people, each with one role, invited by the
-- operator or by an owner. The address is kept as typed and is unique across the service compared
-- lowercased: one address, one user, one partner.
create table portal_users (
  id text primary key check (id ~ '^usr_[a-z0-9]{12,32}$'),
  partner_id text not null references partners(id),
  email text not null check (length(email) between 3 and 254),
  role text not null check (role in ('owner', 'developer', 'cashier', 'accountant')),
  -- scrypt, with its parameters and salt (decision 0035); null until an invitation is accepted.
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
-- instance (decision 0036). The email only as its SHA-256. Unlogged, as rate_limit_counters: the
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

-- A rotation keeps the previous secret 24 h, no longer until it is retired by hand (decision 0037):
-- its end is written in retired_at, ahead of the clock. Secrets left valid by rotations made before
-- this version get their 24 h from the upgrade.
update partner_secrets s set retired_at = now() + interval '24 hours'
  where s.retired_at is null
  and exists (select 1 from partner_secrets n where n.partner_id = s.partner_id and n.id > s.id and n.retired_at is null);
`,
  },
];

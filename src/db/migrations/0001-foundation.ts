import { sql, type Kysely } from 'kysely';

export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`
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
`.execute(db);
}

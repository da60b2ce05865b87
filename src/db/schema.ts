import type { ColumnType, Generated, Insertable, Kysely, Selectable } from 'kysely';
import type { OrderStatus, WebhookEventType } from '../domain/order-state.ts';
import type { SubWallet } from '../domain/wallet.ts';

/** JSON columns: written as text (JSON.stringify, so arrays survive `pg`), read back parsed. */
export type Json<T> = ColumnType<T, string, string>;
type Timestamp = ColumnType<Date, Date, Date>;

export interface SettingsTable {
  key: string;
  value: Json<unknown>;
  updated_at: Timestamp;
}

export interface PartnersTable {
  id: string;
  name: string;
  webhook_url: string | null;
  disabled: ColumnType<boolean, boolean | undefined, boolean>;
  margin_bp: ColumnType<number, number | undefined, number>;
  /** Requests a minute on /v1; null: RATE_LIMIT_PER_MINUTE. */
  rate_limit_per_minute: ColumnType<number | null, number | null | undefined, number | null>;
  /** The contract's X-Hmac-Signature alone is refused (migration 18, decision 0045). */
  require_timestamped_signature: ColumnType<boolean, boolean | undefined, boolean>;
  /** Statuses whose events the webhook receives; always holds completed. */
  webhook_events: ColumnType<WebhookEventType[], WebhookEventType[] | undefined, WebhookEventType[]>;
  /** Days before a policy's last day that its expiring event is made; 0: none (decision 0092). */
  renewal_notice_days: ColumnType<number, number | undefined, number>;
  created_at: Timestamp;
  updated_at: Timestamp;
}

export interface PartnerSecretsTable {
  id: Generated<number>;
  partner_id: string;
  /** Clear text only in rows from before migration 5, until the first start encrypts them; then null. */
  secret: string | null;
  /** The secret encrypted under SECRET_KEY (src/secrets/secret-box.ts): `v1:<key id>:<iv>:<tag>:<ciphertext>`. */
  secret_enc: string | null;
  created_at: Timestamp;
  retired_at: Timestamp | null;
}

export interface CustomerData {
  name?: string;
  email?: string;
  phone: string;
}

export interface PaymentData {
  receipt_id: string;
  transaction_id: string;
  paid_at: number;
  /** The amount paid, in bani (the wire's MDL amount converted once, at validation). */
  amount_bani: number;
  currency: string;
  pos_id?: string;
  /** For wallet payments: the sub-wallet that paid. */
  wallet?: 'online' | 'promo';
}

export interface OrdersTable {
  id: string;
  partner_id: string;
  status: OrderStatus;
  description: string;
  price: number;
  currency: ColumnType<string, string | undefined, string>;
  start_date: string | null;
  end_date: string | null;
  customer: Json<CustomerData>;
  /** The customer's phone in E.164 (migration 19, decision 0095); null when it is no possible number. */
  customer_phone: ColumnType<string | null, string | null | undefined, string | null>;
  created_at: Timestamp;
  expires_at: Timestamp;
  paid_at: Timestamp | null;
  payment_method: 'customer' | 'wallet' | null;
  payment: Json<PaymentData> | null;
  completed_at: Timestamp | null;
  /** A sentence for a person: why the order failed or was refunded. */
  failure_reason: ColumnType<string | null, string | null | undefined, string | null>;
  /** When the renewal job handled the completed order (decision 0092); null: not yet. */
  renewal_noticed_at: ColumnType<Date | null, Date | null | undefined, Date | null>;
  updated_at: Timestamp;
  /** When the partner corrected the order, and who (migration 20); once per order. */
  corrected_at: ColumnType<Date | null, Date | null | undefined, Date | null>;
  corrected_by: ColumnType<string | null, string | null | undefined, string | null>;
}

export interface OrderItemsTable {
  order_id: string;
  idx: number;
  product: string;
  price: number;
  description: string;
  start_date: string | null;
  end_date: string | null;
  details: Json<Record<string, unknown>>;
  issued: Json<Record<string, unknown>> | null;
  file_token: string | null;
}

export interface OrderEventsTable {
  id: Generated<number>;
  order_id: string;
  from_status: OrderStatus | null;
  to_status: OrderStatus;
  reason: string | null;
  actor: string;
  at: Timestamp;
}

export interface DocumentsTable {
  token: string;
  order_id: string;
  idx: number;
  pdf: Uint8Array;
  created_at: Timestamp;
  /** A corrected policy's previous document (migration 20): its URL answers 410. */
  replaced_at: ColumnType<Date | null, Date | null | undefined, Date | null>;
}

export type { SubWallet };

export interface WalletsTable {
  partner_id: string;
  online: ColumnType<number, number | undefined, number>;
  insurance: ColumnType<number, number | undefined, number>;
  promo: ColumnType<number, number | undefined, number>;
  updated_at: Timestamp;
}

export interface LedgerEntriesTable {
  id: Generated<number>;
  partner_id: string;
  wallet: SubWallet;
  amount: number;
  balance_after: number;
  kind: 'credit' | 'payment' | 'refund';
  order_id: string | null;
  reference: string | null;
  actor: string;
  created_at: Timestamp;
}

export interface WebhookEventsTable {
  seq: Generated<number>;
  id: string;
  partner_id: string;
  order_id: string;
  /** The event's type: a status, corrected or expiring. */
  status: WebhookEventType;
  /** The exact bytes every attempt sends (and signs). */
  body: string;
  /** not_subscribed: recorded for list-events, never sent by itself (decision 0091). */
  state: 'waiting' | 'pending' | 'delivered' | 'failed' | 'not_subscribed';
  attempts: ColumnType<number, number | undefined, number>;
  /** Re-sends asked for (list-events counts them with the attempts). */
  resends: ColumnType<number, number | undefined, number>;
  created_at: Timestamp;
  next_attempt_at: Timestamp | null;
  settled_at: Timestamp | null;
}

export type OperatorRole = 'admin' | 'support';

export interface OperatorsTable {
  id: string;
  name: string;
  role: OperatorRole;
  token_sha256: string;
  created_at: Timestamp;
  disabled_at: Timestamp | null;
}

export interface AuditLogTable {
  id: Generated<number>;
  at: Timestamp;
  actor: string;
  /** An operator's role, or a portal user's (via portal); none: a failed operator sign-in (decision 0046). */
  role: OperatorRole | PortalRole | 'partner' | 'none';
  via: 'api' | 'cli' | 'console' | 'system' | 'portal';
  action: string;
  target: string | null;
  /** JSON written as text, read back parsed; null where there is no before (a creation) or after. */
  before: ColumnType<unknown, string | null, string | null>;
  after: ColumnType<unknown, string | null, string | null>;
}

export interface ConsoleSessionsTable {
  id_sha256: string;
  actor: string;
  role: OperatorRole;
  csrf_token: string;
  created_at: Timestamp;
  last_seen_at: Timestamp;
  /** The operator's name at sign-in, for display (migration 11). */
  actor_name: ColumnType<string, string | undefined, string>;
  /** SHA-256 of the token the session was opened with (migration 18); null: opened before it. */
  token_sha256: ColumnType<string | null, string | null | undefined, string | null>;
}

export interface WebhookAttemptsTable {
  id: Generated<number>;
  order_id: string;
  /** Null only for attempts made before events had ids (migration 9). */
  event_id: string | null;
  /** 1 for the first automatic attempt of an event; null for an operator's re-send. */
  attempt: number | null;
  url: string | null;
  /** completion: an automatic attempt recorded before migration 9. */
  trigger: 'completion' | 'automatic' | 'operator' | 'partner';
  attempted_at: Timestamp;
  http_status: number | null;
  error: string | null;
  latency_ms: number;
}

export interface RefundsTable {
  order_id: string;
  method: 'customer' | 'wallet';
  amount: number;
  status: 'to_settle' | 'settled';
  reason: string;
  actor: string;
  ledger_entry_id: number | null;
  created_at: Timestamp;
  settled_at: Timestamp | null;
  /** Withheld from a partner's cancellation (migration 20); `amount` is what goes back. */
  fee: ColumnType<number, number | undefined, number>;
}

/** A preview of cancel-order or correct-order, which its confirmation must name (migration 20). */
export interface AfterSaleQuotesTable {
  id: string;
  order_id: string;
  partner_id: string;
  kind: 'cancel' | 'correct';
  terms: Json<Record<string, unknown>>;
  order_updated_at: Timestamp;
  created_at: Timestamp;
  valid_until: Timestamp;
  used_at: Timestamp | null;
}

export interface IdempotencyKeysTable {
  partner_id: string;
  key: string;
  request_hash: string;
  created_at: Timestamp;
  completed_at: Timestamp | null;
  response_status: number | null;
  response_body: string | null;
}

/** Paid orders whose issue-order job is still to be created (migration 13). */
export interface IssuanceOutboxTable {
  order_id: string;
  queued_at: Date;
}

/** Events of issued orders whose first deliver-webhook job is still to be created (migration 14). */
export interface WebhookOutboxTable {
  event_id: string;
  partner_id: string;
  queued_at: Date;
}

/** The last in-service reconciliation: one row (migration 17). */
export interface ReconciliationStatusTable {
  id: ColumnType<boolean, boolean | undefined, never>;
  ran_at: Date;
  differences: number;
  wallets: number;
  orders: number;
  seconds: number;
}

export type PortalRole = 'owner' | 'developer' | 'cashier' | 'accountant';

/** A partner's own people (migration 16). */
export interface PortalUsersTable {
  id: string;
  partner_id: string;
  email: string;
  role: PortalRole;
  /** `scrypt$<N>$<r>$<p>$<salt>$<hash>`; null until the user's invitation is accepted. */
  password_hash: string | null;
  created_at: Timestamp;
  disabled_at: Timestamp | null;
  /** The portal language the user chose (migration 22); null: Accept-Language decides. */
  language: ColumnType<
    'ro' | 'ru' | 'en' | null,
    'ro' | 'ru' | 'en' | null | undefined,
    'ro' | 'ru' | 'en' | null
  >;
}

export interface PortalInvitationsTable {
  token_sha256: string;
  user_id: string;
  created_at: Timestamp;
  expires_at: Timestamp;
  used_at: Timestamp | null;
}

export interface PortalSessionsTable {
  id_sha256: string;
  user_id: string;
  csrf_secret: string;
  created_at: Timestamp;
  last_seen_at: Timestamp;
}

export interface PortalSignInFailuresTable {
  id: Generated<number>;
  address: string;
  email_sha256: string;
  at: Timestamp;
}

export interface DB {
  settings: SettingsTable;
  partners: PartnersTable;
  partner_secrets: PartnerSecretsTable;
  idempotency_keys: IdempotencyKeysTable;
  issuance_outbox: IssuanceOutboxTable;
  webhook_outbox: WebhookOutboxTable;
  orders: OrdersTable;
  reconciliation_status: ReconciliationStatusTable;
  order_items: OrderItemsTable;
  order_events: OrderEventsTable;
  documents: DocumentsTable;
  wallets: WalletsTable;
  ledger_entries: LedgerEntriesTable;
  webhook_events: WebhookEventsTable;
  webhook_attempts: WebhookAttemptsTable;
  operators: OperatorsTable;
  audit_log: AuditLogTable;
  console_sessions: ConsoleSessionsTable;
  refunds: RefundsTable;
  after_sale_quotes: AfterSaleQuotesTable;
  portal_users: PortalUsersTable;
  portal_invitations: PortalInvitationsTable;
  portal_sessions: PortalSessionsTable;
  portal_sign_in_failures: PortalSignInFailuresTable;
}

export type OrderRow = Selectable<OrdersTable>;
export type OrderItemRow = Selectable<OrderItemsTable>;
export type NewOrderItem = Insertable<OrderItemsTable>;
export type PartnerRow = Selectable<PartnersTable>;
export type WalletRow = Selectable<WalletsTable>;

/** The database as the repositories take it: the pool or a transaction on it (a transaction is one). */
export type Db = Kysely<DB>;

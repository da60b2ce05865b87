import { Type, type TSchema } from '@sinclair/typebox';
import type { CustomerData, PaymentData } from '../db/schema.ts';
import { ORDER_STATUSES, WEBHOOK_EVENT_TYPES } from '../domain/order-state.ts';
import { SUB_WALLETS } from '../domain/wallet.ts';
import { Nullable } from './typed.ts';

/**
 * Wire schemas of the operator API (/admin) and the health checks. The response schemas serialise
 * (fast-json-stringify: a field not listed here is dropped), so each lists every field of its use
 * case's answer in the order the use case builds it; the routes check the two agree (`exactly`).
 */
/** One of `values`, documented as an enum; typed T (a repository may type it `string`), serialised as text. */
const oneOf = <const T extends string>(values: readonly T[]) =>
  Type.Unsafe<T>({ type: 'string', enum: [...values] });
/** A JSON object stored as the partner sent it (or a product issued it), answered as it is. */
const freeForm = <T>(description: string) =>
  Type.Unsafe<T>({ type: 'object', additionalProperties: true, description });
const Time = Type.String({ description: 'ISO-8601 with offset (Europe/Chisinau)' });
const Mdl = Type.Number({ description: 'MDL' });
const OrderStatus = oneOf(ORDER_STATUSES);
const SubWallet = oneOf(SUB_WALLETS);

export const Id = Type.Object({ id: Type.String({ minLength: 1, maxLength: 64 }) });

/** Paging of the lists. Query strings are text and the service validates without type coercion. */
export const Page = {
  limit: Type.Optional(
    Type.String({ pattern: '^(?:[1-9][0-9]?|[1-4][0-9]{2}|500)$', description: '1 to 500 (default 50)' }),
  ),
  cursor: Type.Optional(Type.String({ maxLength: 200, description: 'The `next_cursor` of the page before' })),
};
/** `limit` as the use cases take it. */
export const pageOf = <Q extends { limit?: string }>(q: Q) => {
  const { limit, ...rest } = q;
  return { ...rest, ...(limit ? { limit: Number(limit) } : {}) };
};
export const WebhookUrl = Nullable(Type.String({ minLength: 1, maxLength: 2000 }));
export const WebhookEvents = Type.Array(oneOf(WEBHOOK_EVENT_TYPES), {
  uniqueItems: true,
  description: 'Event types the webhook receives; always includes "completed".',
});
export const RenewalNoticeDays = Type.Integer({
  minimum: 0,
  maximum: 365,
  description: 'Days before a policy’s last day that its expiring event is made; 0: none',
});

export const CreatedPartner = Type.Object(
  {
    id: Type.String(),
    secret: Type.String({ description: 'Shown only here: store it now' }),
    name: Type.String(),
    webhook_url: WebhookUrl,
    webhook_events: WebhookEvents,
    renewal_notice_days: RenewalNoticeDays,
    wallet: Type.Boolean(),
    require_timestamped_signature: Type.Boolean(),
  },
  { description: 'The partner, with its secret' },
);

const partnerFields = {
  id: Type.String(),
  name: Type.String(),
  webhook_url: WebhookUrl,
  webhook_events: WebhookEvents,
  renewal_notice_days: RenewalNoticeDays,
  wallet: Type.Boolean(),
  disabled: Type.Boolean(),
  margin_bp: Type.Integer(),
  rate_limit_per_minute: Type.Integer({
    description: 'The limit in force: the partner’s own, or the service’s RATE_LIMIT_PER_MINUTE',
  }),
  require_timestamped_signature: Type.Boolean({
    description: 'true: /v1 requests must carry X-Polita-Signature; X-Hmac-Signature alone answers 401',
  }),
};

export const Partner = Type.Object(
  { ...partnerFields, active_secrets: Type.Integer() },
  { description: 'The partner' },
);

const nextCursor = Nullable(Type.String({ description: 'The next page’s `cursor`; null on the last page' }));

export const PartnerList = Type.Object(
  { partners: Type.Array(Type.Object(partnerFields)), next_cursor: nextCursor },
  { description: 'Partners by id' },
);

export const NewSecret = Type.Object(
  {
    secret: Type.String({
      description: 'Shown only here; the previous secret stays valid until retired or for 24 h',
    }),
  },
  { description: 'The new secret' },
);
export const RetiredSecrets = Type.Object(
  { retired: Type.Integer({ description: 'How many secrets were retired' }) },
  { description: 'The old secrets retired' },
);

export const PortalInvitation = Type.Object(
  {
    id: Type.String({ description: 'The portal user’s id' }),
    email: Type.String(),
    role: oneOf(['owner', 'developer', 'cashier', 'accountant']),
    invitation_url: Type.String({
      description:
        'Shown only here: the link sets the user’s password, once, within 72 h. Hand it over safely.',
    }),
  },
  { description: 'The invited portal user and its invitation link' },
);

const orderSummary = {
  id: Type.String(),
  partner_id: Type.String(),
  status: OrderStatus,
  stored_status: OrderStatus,
  description: Type.String(),
  price: Mdl,
  currency: Type.String(),
  payment_method: Nullable(oneOf(['customer', 'wallet'])),
  created_at: Time,
  expires_at: Time,
};

export const OrderList = Type.Object(
  {
    orders: Type.Array(Type.Object(orderSummary)),
    next_cursor: nextCursor,
  },
  { description: 'Orders, newest first' },
);

export const Refund = Type.Object(
  {
    order_id: Type.String(),
    method: oneOf(['customer', 'wallet']),
    amount: Mdl,
    fee: Type.Number({
      description: 'Withheld from a partner’s cancellation, MDL; 0 for an operator’s refund',
    }),
    currency: Type.String(),
    status: oneOf(['to_settle', 'settled']),
    reason: Type.String(),
    actor: Type.String(),
    created_at: Time,
    settled_at: Nullable(Time),
  },
  { description: 'The refund' },
);

export const OrderDetail = Type.Object(
  {
    ...orderSummary,
    customer: freeForm<CustomerData>('The customer as the partner sent it'),
    start_date: Nullable(Type.String()),
    end_date: Nullable(Type.String()),
    payment: Nullable(
      freeForm<Omit<PaymentData, 'amount_bani'> & { amount: number }>(
        'The payment recorded (customer or wallet), `amount` in MDL',
      ),
    ),
    paid_at: Nullable(Time),
    completed_at: Nullable(Time),
    corrected_at: Nullable(Time),
    corrected_by: Nullable(
      Type.String({
        description: 'Who corrected the order (decision 0088): `partner:<id>` or a portal user',
      }),
    ),
    failure_reason: Nullable(
      Type.String({ description: 'Why a failed or refunded order is so, in a sentence for a person' }),
    ),
    products: Type.Array(
      Type.Object({
        idx: Type.Integer(),
        product: Type.String(),
        price: Mdl,
        description: Type.String(),
        start_date: Nullable(Type.String()),
        end_date: Nullable(Type.String()),
        issued: Nullable(freeForm<Record<string, unknown>>('The product’s issued fields')),
        file: Nullable(Type.String({ description: 'URL of the policy PDF' })),
      }),
    ),
    history: Type.Array(
      Type.Object({
        from: Nullable(OrderStatus),
        to: OrderStatus,
        reason: Nullable(Type.String()),
        actor: Type.String(),
        at: Time,
      }),
    ),
    webhook_events: Type.Array(
      Type.Object({
        id: Type.String(),
        status: oneOf(WEBHOOK_EVENT_TYPES),
        state: oneOf(['waiting', 'pending', 'delivered', 'failed', 'not_subscribed']),
        attempts: Type.Integer(),
        created_at: Time,
        next_attempt_at: Nullable(Time),
        settled_at: Nullable(Time),
      }),
    ),
    webhook_attempts: Type.Array(
      Type.Object({
        event_id: Nullable(Type.String()),
        event: Nullable(oneOf(WEBHOOK_EVENT_TYPES)),
        attempt: Nullable(Type.Integer({ description: 'null: an operator’s re-send' })),
        trigger: oneOf(['completion', 'automatic', 'operator', 'partner']),
        url: Nullable(Type.String()),
        at: Time,
        http_status: Nullable(Type.Integer()),
        error: Nullable(Type.String()),
        latency_ms: Type.Integer(),
      }),
    ),
    ledger: Type.Array(
      Type.Object({
        wallet: SubWallet,
        amount: Mdl,
        balance_after: Mdl,
        kind: oneOf(['credit', 'payment', 'refund']),
        reference: Nullable(Type.String()),
        actor: Type.String(),
        at: Time,
      }),
    ),
    refund: Nullable(Refund),
  },
  { description: 'The order in full' },
);

export const Delivery = Type.Object(
  {
    eventId: Type.String(),
    url: Nullable(Type.String()),
    delivered: Type.Boolean({ description: 'The webhook answered 2xx within 10 s' }),
    httpStatus: Nullable(Type.Integer()),
    error: Nullable(Type.String()),
    latencyMs: Type.Integer(),
  },
  { description: 'The attempt made' },
);

export const Clock = Type.Object({ now: Time }, { description: 'The sandbox clock' });

export const Settings = Type.Object(
  { balance_spending_enabled: Type.Boolean() },
  { description: 'The settings' },
);

const byWallet = Type.Object({ online: Mdl, insurance: Mdl, promo: Mdl });

/**
 * An answer as JSON, or as CSV with `format=csv`: Fastify serialises by the answer's media type,
 * and sends the CSV text as it is (a string with a non-JSON type is never serialised).
 */
const jsonOrCsv = (description: string, json: TSchema, csvHeader: string) => ({
  description,
  content: {
    'application/json': { schema: json },
    'text/csv': { schema: Type.String({ description: csvHeader }) },
  },
});

const LedgerLine = Type.Object({
  id: Type.Integer(),
  at: Time,
  wallet: SubWallet,
  kind: Type.String(),
  amount: Mdl,
  balance_after: Mdl,
  order_id: Nullable(Type.String()),
  reference: Nullable(Type.String()),
  actor: Type.String(),
});

export const Statement = Type.Object({
  partner_id: Type.String(),
  from: Type.String(),
  to: Type.String(),
  currency: Type.Literal('MDL'),
  opening: byWallet,
  closing: byWallet,
  entries: Type.Array(LedgerLine),
  customer_refunds: Type.Array(
    Type.Object({
      at: Time,
      order_id: Type.String(),
      amount: Mdl,
      fee: Mdl,
      actor: Type.String(),
    }),
    {
      description: 'Refunds of customer-paid orders, owed by the partner to its customers; not in the wallet',
    },
  ),
});

export const PartnerWallet = Type.Object(
  {
    partner_id: Type.String(),
    balance: Type.Number({ description: 'Spendable total: online + promo, MDL' }),
    currency: Type.Literal('MDL'),
    wallets: byWallet,
    updated_at: Time,
    ledger: Type.Array(LedgerLine, { description: 'Newest entry first' }),
    next_cursor: nextCursor,
  },
  { description: 'The balances and a page of the ledger' },
);

export const PartnerWalletResponse = jsonOrCsv(
  'Balances and the ledger, newest entry first, paged',
  PartnerWallet,
  'entry_id,at,wallet,kind,amount,balance_after,order_id,reference,actor',
);

export const AuditPage = Type.Object(
  {
    entries: Type.Array(
      Type.Object({
        id: Type.Integer(),
        at: Time,
        actor: Type.String({
          description:
            'admin-token, an operator id (op_…), cli:<user>, system, portal:<partner id>:<email> for a partner’s portal user, or unauthenticated for a wrong operator token (role none)',
        }),
        role: oneOf(['admin', 'support', 'owner', 'developer', 'cashier', 'accountant', 'partner', 'none']),
        via: oneOf(['api', 'cli', 'console', 'system', 'portal']),
        action: Type.String({ description: 'e.g. partner.create, wallet.credit, order.refund' }),
        target: Nullable(Type.String({ description: 'The partner, order or operator acted on' })),
        before: Type.Unknown({ description: 'What changed, as it was (null for a creation)' }),
        after: Type.Unknown({ description: 'What changed, as it became' }),
      }),
    ),
    next_cursor: nextCursor,
  },
  { description: 'Operator and portal actions, newest first' },
);

export const StatementResponse = jsonOrCsv(
  'Opening balances, every entry with its running balance, closing balances',
  Statement,
  'date,wallet,kind,amount,balance,order_id,reference,actor,entry_id',
);

import { sql, type RawBuilder } from 'kysely';
import { assertTransition } from '../../domain/order-state.ts';
import {
  PAYING_SUB_WALLETS,
  RECEIPT_PREFIX,
  WALLET_CHECKS,
  WALLET_PAYMENT,
  type SpendableWallet,
  type WalletCheck,
} from '../../domain/wallet.ts';
import { compiledOnce, type Param } from '../compiled.ts';
import type { Db, OrderItemRow, OrderRow } from '../schema.ts';
import { spendingEnabledSql } from './settings.ts';

/**
 * The statements that pay drafts from a partner's wallet (pay-order-from-balance; decisions 0012,
 * 0026, 0065 and 0103), and the read that tells which check refused one. Each statement checks,
 * pays and books in one round trip and commits on its own: the order moves draft → paid with its
 * payment and event, the sub-wallet is debited, the ledger entry appended and the order queued for
 * issuance, all of it or nothing. Every payment of a partner waits on the wallet row, so the row is
 * held only while the server runs the statement, never across a round trip to the service.
 */

/** Who pays, and what the checks of decision 0012 besides the order's own state are judged by. */
export interface WalletPaymentTerms {
  partnerId: string;
  /** The settings key of the operator's spending switch (read by spendingEnabledSql). */
  spendingKey: string;
  /** The products a wallet may pay for: an order holding any other is refused. */
  eligible: readonly string[];
  /** Per product with a payability rule, the creation times whose orders can be paid now. */
  windows: ReadonlyMap<string, { from: number; until: number }>;
  /** What the order's event says, and who it names. */
  reason: string;
  actor: string;
}

/** A draft to pay: its id, the payment recorded on it, and the instant it is paid at. */
export interface DraftToPay {
  orderId: string;
  /** The order's payment before the statement adds amount_bani, receipt_id and wallet. */
  payment: Record<string, unknown>;
  at: Date;
}

/** What a statement did with one draft. */
export type WalletPaymentOutcome =
  | { outcome: 'paid'; order: OrderRow; wallet: SpendableWallet; entryId: number | null }
  /** Every check passed but neither sub-wallet covers the price: nothing changed. */
  | { outcome: 'insufficient' }
  /**
   * Nothing changed: the order is not (or no longer) a draft this partner can pay from its wallet
   * now, by one of the checks of decision 0012 before the balance; which one, the caller reads.
   */
  | { outcome: 'refused' };

/**
 * One draft paid in one statement: it locks the order while every check of decision 0012 before
 * the balance passes ({@link everyCheckPasses}), then the wallet (order first, wallet second, as
 * everywhere); chooses the sub-wallet ({@link payingSubWallet}); and books what it decided
 * ({@link bookTheDecidedPayments}).
 */
export async function payDraftFromWallet(
  db: Db,
  terms: WalletPaymentTerms,
  draft: DraftToPay,
): Promise<WalletPaymentOutcome> {
  assertTransition(WALLET_PAYMENT.from, WALLET_PAYMENT.to);
  const { rows } = await payOneStatement(db, {
    ...termsArgs(terms),
    orderId: draft.orderId,
    at: draft.at,
    payment: JSON.stringify(draft.payment),
  });
  return outcomeOf(rows[0]!, draft.orderId);
}

/**
 * Several drafts of one partner paid in one statement (one round trip, one commit), each as
 * {@link payDraftFromWallet} would in their order of arrival: one outcome a draft, in that order.
 * It locks the orders in id order while the checks before the balance pass at each one's instant,
 * then the wallet (orders first, wallet second, so two statements never wait on each other in a
 * cycle); goes through the payable orders in their order of arrival, each taking the sub-wallet
 * that covers it out of the balances the earlier ones left (one none covers changes nothing); and
 * books what it decided, the ledger entries' ids drawn in that order (reconciliation's running sums
 * follow ids). An order named twice is paid at most once, by its first payment; the others are
 * refused (the caller sends an order once a statement, decision 0026).
 */
export async function payDraftsFromWalletInTurn(
  db: Db,
  terms: WalletPaymentTerms,
  drafts: readonly DraftToPay[],
): Promise<WalletPaymentOutcome[]> {
  assertTransition(WALLET_PAYMENT.from, WALLET_PAYMENT.to);
  const { rows } = await payInTurnStatement(db, {
    ...termsArgs(terms),
    drafts: JSON.stringify(
      drafts.map((d) => ({ id: d.orderId, payment: d.payment, at: d.at.toISOString() })),
    ),
    orderIds: drafts.map((d) => d.orderId),
  });
  if (rows.length !== drafts.length)
    throw new Error('the wallet payments statement answered another number of drafts');
  return rows.map((row, i) => {
    if (row.arrival !== i + 1)
      throw new Error('the wallet payments statement answered its drafts out of order');
    return outcomeOf(row, drafts[i]!.orderId);
  });
}

function outcomeOf(row: AnswerRow, orderId: string): WalletPaymentOutcome {
  const { arrival: _, payable, paid_from, ledger_entry_id, order_moved, checked_whole: __, ...order } = row;
  if (!payable) return { outcome: 'refused' };
  if (!paid_from) return { outcome: 'insufficient' };
  // Never: the order was locked as a draft, and the statement raises when a covered one did not move.
  if (!order_moved) throw new Error(`order ${orderId} changed under its row lock`);
  return { outcome: 'paid', order, wallet: paid_from, entryId: ledger_entry_id };
}

/** A statement's answer for each draft: what it did, and the paid order's columns (null when it changed nothing). */
type AnswerRow = {
  arrival: number;
  payable: boolean;
  paid_from: SpendableWallet | null;
  ledger_entry_id: number | null;
  order_moved: boolean;
  checked_whole: null;
} & OrderRow;

/**
 * What decides a wallet payment that its statement refused, to answer the first check that refuses
 * it: the order with its items, whether the partner has a wallet, and the operator's spending
 * switch, in one round trip outside any transaction (nothing is locked). undefined when no order
 * has this id.
 */
export async function readWhatDecidesAWalletPayment(
  db: Db,
  orderId: string,
  partnerId: string,
  spendingKey: string,
): Promise<{ order: OrderRow; items: OrderItemRow[]; hasWallet: boolean; spending: boolean } | undefined> {
  const { rows } = await whatDecidesStatement(db, { orderId, partnerId, spendingKey });
  const row = rows[0];
  if (!row) return undefined;
  const { order_items, has_wallet, spending, ...order } = row;
  return { order, items: order_items, hasWallet: has_wallet, spending };
}

const whatDecidesStatement = compiledOnce(
  (db, param: Param<{ orderId: string; partnerId: string; spendingKey: string }>) =>
    db
      .selectFrom('orders')
      .selectAll('orders')
      .select([
        sql<
          OrderItemRow[]
        >`(select coalesce(json_agg(item order by item.idx), '[]'::json) from order_items item where item.order_id = orders.id)`.as(
          'order_items',
        ),
        sql<boolean>`exists (select 1 from wallets wallet where wallet.partner_id = ${param('partnerId')})`.as(
          'has_wallet',
        ),
        spendingEnabledSql(param('spendingKey')).as('spending'),
      ])
      .where('id', '=', param('orderId')),
);

/** The terms as the statements take them: the windows as three arrays, their open ends as ±infinity. */
type TermsArgs = {
  partnerId: string;
  spendingKey: string;
  eligible: readonly string[];
  windowProducts: string[];
  windowFrom: string[];
  windowUntil: string[];
  reason: string;
  actor: string;
};

/** A window's end as PostgreSQL reads a timestamptz: ±infinity for an open end. */
const instantText = (ms: number) =>
  Number.isFinite(ms) ? new Date(ms).toISOString() : ms > 0 ? 'infinity' : '-infinity';

function termsArgs(t: WalletPaymentTerms): TermsArgs {
  const windows = [...t.windows];
  return {
    partnerId: t.partnerId,
    spendingKey: t.spendingKey,
    eligible: t.eligible,
    windowProducts: windows.map(([product]) => product),
    windowFrom: windows.map(([, w]) => instantText(w.from)),
    windowUntil: windows.map(([, w]) => instantText(w.until)),
    reason: t.reason,
    actor: t.actor,
  };
}

/** The terms in a statement: each one a parameter. */
type TermsInSql = Record<keyof TermsArgs, RawBuilder<unknown>>;

const termsInSql = <A extends TermsArgs>(param: Param<A>): TermsInSql => ({
  partnerId: param('partnerId'),
  spendingKey: param('spendingKey'),
  eligible: param('eligible'),
  windowProducts: param('windowProducts'),
  windowFrom: param('windowFrom'),
  windowUntil: param('windowUntil'),
  reason: param('reason'),
  actor: param('actor'),
});

/**
 * Each check of decision 0012 before the balance (walletRefusal, src/domain/wallet.ts), as the
 * condition on the row of `orders` under which it passes at the payment's instant `at`. One per
 * check of WALLET_CHECKS, which the type demands: a check added to the rule does not compile until
 * the statements apply it too.
 */
const passes = (t: TermsInSql, at: RawBuilder<unknown>): Record<WalletCheck, RawBuilder<boolean>> => ({
  wallet: sql`exists (select 1 from wallets wallet where wallet.partner_id = ${t.partnerId})`,
  spending: spendingEnabledSql(t.spendingKey),
  order: sql`orders.partner_id = ${t.partnerId}`,
  // inWindow (src/domain/payment.ts) for each item whose product has a window.
  window: sql`not exists (
          select 1 from order_items item
          join unnest(${t.windowProducts}::text[], ${t.windowFrom}::timestamptz[], ${t.windowUntil}::timestamptz[])
            as payable_window (product, from_at, until_at) on payable_window.product = item.product
          where item.order_id = orders.id
            and not (orders.created_at >= payable_window.from_at and orders.created_at < payable_window.until_at))`,
  // A draft whose effectiveStatus is still draft: its expiry instant not yet reached.
  status: sql`orders.status = ${sql.lit(WALLET_PAYMENT.from)} and orders.expires_at > ${at}`,
  // walletEligible: no item of a product outside the list.
  eligible: sql`not exists (
          select 1 from order_items item
          where item.order_id = orders.id and item.product <> all (${t.eligible}::text[]))`,
});

/** Every check of decision 0012 before the balance passes: the order may be locked for payment. */
const everyCheckPasses = (t: TermsInSql, at: RawBuilder<unknown>) => {
  const pass = passes(t, at);
  return sql<boolean>`${sql.join(
    WALLET_CHECKS.map((check) => pass[check]),
    sql`\n        and `,
  )}`;
};

/**
 * payingSubWallet (src/domain/wallet.ts) in SQL, built from the same list: the first of
 * PAYING_SUB_WALLETS whose balance in the row `balances` covers `price`, else null.
 */
const payingSubWallet = (balances: string, price: RawBuilder<unknown>) =>
  sql<SpendableWallet | null>`case ${sql.join(
    PAYING_SUB_WALLETS.map((w) => sql`when ${sql.ref(`${balances}.${w}`)} >= ${price} then ${sql.lit(w)}`),
    sql` `,
  )} end`;

/** Each paying sub-wallet's balance after `sub` paid `price` out of the row `balances`, as columns named after them. */
const balancesAfter = (balances: string, sub: RawBuilder<unknown>, price: RawBuilder<unknown>) =>
  sql.join(
    PAYING_SUB_WALLETS.map(
      (w) =>
        sql`${sql.ref(`${balances}.${w}`)} - case when ${sub} = ${sql.lit(w)} then ${price} else 0 end as ${sql.id(w)}`,
    ),
  );

/** The paying sub-wallets' balances of the row `balances` (all of them when none is given). */
const balancesOf = (balances?: string) =>
  sql.join(PAYING_SUB_WALLETS.map((w) => (balances ? sql.ref(`${balances}.${w}`) : sql.id(w))));

/**
 * booksEntry (src/domain/wallet.ts) in SQL: a payment books a ledger entry only when it moves money
 * (a free order books none). test/db/wallet-rules-sql.test.ts holds the two to each other.
 */
export const booksEntrySql = (price: RawBuilder<unknown>) => sql<boolean>`${price} > 0`;

/**
 * `decided`: the payments the statement decided (one row each: its arrival, the order's id and
 * price, the payment and instant, the paying sub-wallet or null, and each sub-wallet's balance
 * after it), with the paying sub-wallet's balance after it and the ledger entry's id, drawn in the
 * order of arrival (a volatile output is computed after the sort) and only for a payment that books
 * one (booksEntry: a free order books none).
 */
const decided = (chosen: RawBuilder<unknown>) => sql`decided as (
      select chosen.*,
             case chosen.paying_sub_wallet ${sql.join(
               PAYING_SUB_WALLETS.map((w) => sql`when ${sql.lit(w)} then ${sql.ref(`chosen.${w}`)}`),
               sql` `,
             )} end as balance_after,
             case when chosen.paying_sub_wallet is not null and ${booksEntrySql(sql.ref('chosen.price'))}
                  then nextval('ledger_entries_id_seq'::regclass) end as ledger_entry_id
      from (${chosen}) chosen
      order by chosen.arrival
    )`;

/**
 * What a wallet payment does once `decided` holds it, the same for one draft and several: the
 * order moves from WALLET_PAYMENT.from to .to with its payment (the receipt naming the ledger entry,
 * and the sub-wallet) and its event, as transition() does; the wallet takes the balances the last
 * booked payment left; each booked payment appends its ledger entry with its balance_after; each
 * paid order is queued for issuance (the outbox). One answer row per row of `requested`, in order
 * of arrival. `orderKey` names the orders by key again, so the planner finds them by index.
 */
const bookTheDecidedPayments = (t: TermsInSql, orderKey: RawBuilder<boolean>) => sql`
    paid_order as (
      update orders set
        status = ${sql.lit(WALLET_PAYMENT.to)},
        payment = decided.payment || jsonb_build_object(
          'amount_bani', decided.price,
          'receipt_id', ${sql.lit(RECEIPT_PREFIX)} || coalesce(decided.ledger_entry_id, 0),
          'wallet', decided.paying_sub_wallet),
        payment_method = ${sql.lit(WALLET_PAYMENT.method)},
        paid_at = decided.at,
        updated_at = decided.at
      from decided
      where orders.id = decided.id and orders.status = ${sql.lit(WALLET_PAYMENT.from)}
        and decided.paying_sub_wallet is not null and ${orderKey}
      returning orders.*
    ), booked as (
      select * from decided where ledger_entry_id is not null
    ), debited as (
      update wallets set ${sql.join(PAYING_SUB_WALLETS.map((w) => sql`${sql.id(w)} = ${sql.ref(`last_booked.${w}`)}`))},
                         updated_at = (select max(at) from booked)
      from (select * from booked order by arrival desc limit 1) last_booked
      where wallets.partner_id = ${t.partnerId}
      returning 1
    ), ledger_entry as (
      insert into ledger_entries
        (id, partner_id, wallet, amount, balance_after, kind, order_id, reference, actor, created_at)
      select ledger_entry_id, ${t.partnerId}, paying_sub_wallet, -price, balance_after, 'payment', id, null, ${t.actor}, at
      from booked
    ), order_event as (
      insert into order_events (order_id, from_status, to_status, reason, actor, at)
      select paid_order.id, ${sql.lit(WALLET_PAYMENT.from)}, ${sql.lit(WALLET_PAYMENT.to)}, ${t.reason}::text, ${t.actor}::text, paid_order.paid_at
      from paid_order
    ), queued_for_issuance as (
      insert into issuance_outbox (order_id, queued_at) select paid_order.id, paid_order.paid_at from paid_order
    ), booked_whole as (
      -- Never false: every covered payment moved its order, and the wallet was debited if any booked.
      select (select count(*) from paid_order) = (select count(*) from decided where paying_sub_wallet is not null)
         and (select count(*) from debited) = (select least(count(*), 1) from booked) as ok
    )
    select requested.arrival, decided.id is not null as payable, decided.paying_sub_wallet as paid_from,
           decided.ledger_entry_id, paid_order.id is not null as order_moved,
           -- If it were false, polita_refuse (migration 0004) raises: the statement fails whole and
           -- nothing of it commits, rather than a debit without its order's move.
           case when not booked_whole.ok
                then polita_refuse('wallet payments not booked whole for partner ' || ${t.partnerId}) end as checked_whole,
           paid_order.*
    from requested cross join booked_whole
    left join decided on decided.arrival = requested.arrival
    left join paid_order on paid_order.id = decided.id
    order by requested.arrival`;

const payOneStatement = compiledOnce(
  (db, param: Param<TermsArgs & { orderId: string; at: Date; payment: string }>) => {
    const terms = termsInSql(param);
    const at = sql`${param('at')}::timestamptz`;
    const statement = sql<AnswerRow>`
    with requested as (
      select 1::bigint as arrival
    ), the_order as (
      select id, price from orders
      where id = ${param('orderId')}
        and ${everyCheckPasses(terms, at)}
      for update
    ), wallet as (
      select the_order.id, the_order.price, ${payingSubWallet('wallets', sql`the_order.price`)} as paying_sub_wallet,
             ${balancesOf('wallets')}
      from wallets, the_order where wallets.partner_id = ${terms.partnerId}
      for update of wallets
    ), ${decided(sql`
      select 1::bigint as arrival, wallet.id, wallet.price, ${param('payment')}::jsonb as payment, ${at} as at,
             wallet.paying_sub_wallet, ${balancesAfter('wallet', sql`wallet.paying_sub_wallet`, sql`wallet.price`)}
      from wallet`)}, ${bookTheDecidedPayments(terms, sql`orders.id = ${param('orderId')}`)}`;
    return { compile: () => statement.compile(db) };
  },
);

const payInTurnStatement = compiledOnce(
  (db, param: Param<TermsArgs & { drafts: string; orderIds: string[] }>) => {
    const terms = termsInSql(param);
    // Recursive only for balances_after_each: each payment's sub-wallet depends on what the ones
    // before it took, which no window function can say.
    const statement = sql<AnswerRow>`
    with recursive requested as (
      select arrival, draft->>'id' as id, draft->'payment' as payment, (draft->>'at')::timestamptz as at
      from jsonb_array_elements(${param('drafts')}::jsonb) with ordinality as sent (draft, arrival)
    ), first_request_of_each_order as (
      select distinct on (id) id, arrival, payment, at from requested order by id, arrival
    ), payable_order as (
      select orders.id, orders.price, first_request.arrival, first_request.payment, first_request.at
      from orders join first_request_of_each_order first_request on first_request.id = orders.id
      -- The ids as an array parameter too, so that the orders are found by their key: the planner
      -- cannot see how few the requests are, and would otherwise walk every open draft.
      where orders.id = any (${param('orderIds')}::text[])
        and ${everyCheckPasses(terms, sql`first_request.at`)}
      order by orders.id
      for update of orders
    ), wallet as (
      select ${balancesOf()} from wallets
      where partner_id = ${terms.partnerId} and exists (select 1 from payable_order)
      for update
    ), in_turn as (
      select row_number() over (order by arrival) as turn, id, arrival, price, payment, at from payable_order
    ), balances_after_each (turn, paying_sub_wallet, ${balancesOf()}) as (
      -- Turn 0 is the wallet as locked; turn k pays the k-th payable order, in order of arrival,
      -- from the balances turn k - 1 left (no sub-wallet when none covers it: nothing taken).
      select 0::bigint, null::text, ${balancesOf()} from wallet
      union all
      select in_turn.turn, choice.paying_sub_wallet,
             ${balancesAfter('before_this', sql`choice.paying_sub_wallet`, sql`in_turn.price`)}
      from balances_after_each before_this join in_turn on in_turn.turn = before_this.turn + 1
      cross join lateral (select ${payingSubWallet('before_this', sql`in_turn.price`)} as paying_sub_wallet) choice
    ), ${decided(sql`
      select in_turn.arrival, in_turn.id, in_turn.price, in_turn.payment, in_turn.at,
             after_this.paying_sub_wallet, ${balancesOf('after_this')}
      from balances_after_each after_this join in_turn on in_turn.turn = after_this.turn`)},
      ${bookTheDecidedPayments(terms, sql`orders.id = any (${param('orderIds')}::text[])`)}`;
    return { compile: () => statement.compile(db) };
  },
);

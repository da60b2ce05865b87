import { sql, type RawBuilder, type Selectable, type Transaction } from 'kysely';
import { assertTransition } from '../../domain/order-state.ts';
import {
  PAYING_SUB_WALLETS,
  RECEIPT_PREFIX,
  WALLET_CHECKS,
  WALLET_PAYMENT,
  type SpendableWallet,
  type WalletCheck,
} from '../../domain/wallet.ts';
import { compiledOnce } from '../compiled.ts';
import type { DB, LedgerEntriesTable, OrderItemRow, OrderRow, SubWallet, WalletRow, Db } from '../schema.ts';

export async function findWallet(db: Db, partnerId: string): Promise<WalletRow | undefined> {
  return db.selectFrom('wallets').selectAll().where('partner_id', '=', partnerId).executeTakeFirst();
}

/** The wallet row locked until the transaction ends: every balance change goes through here. */
export async function lockWallet(trx: Transaction<DB>, partnerId: string): Promise<WalletRow | undefined> {
  return trx
    .selectFrom('wallets')
    .selectAll()
    .where('partner_id', '=', partnerId)
    .forUpdate()
    .executeTakeFirst();
}

export async function createWallet(trx: Transaction<DB>, partnerId: string, at: Date): Promise<void> {
  await trx
    .insertInto('wallets')
    .values({ partner_id: partnerId, updated_at: at })
    .onConflict((oc) => oc.doNothing())
    .execute();
}

export interface LedgerLine {
  partnerId: string;
  wallet: SubWallet;
  amount: number;
  kind: 'credit' | 'payment' | 'refund';
  orderId: string | null;
  reference: string | null;
  actor: string;
  at: Date;
}

/**
 * Appends a ledger entry and moves the sub-wallet balance by the same amount, in the caller's
 * transaction, on a wallet row the caller has locked. Returns false (and changes nothing) when a
 * credit with this reference was already booked.
 */
export async function book(
  trx: Transaction<DB>,
  wallet: WalletRow,
  line: LedgerLine,
): Promise<WalletRow | null> {
  return (await bookEntry(trx, wallet, line))?.wallet ?? null;
}

/** book, answering the ledger entry's id as well (a payment's receipt names it). */
export async function bookEntry(
  trx: Transaction<DB>,
  wallet: WalletRow,
  line: LedgerLine,
): Promise<{ wallet: WalletRow; entryId: number } | null> {
  const balanceAfter = wallet[line.wallet] + line.amount;
  if (balanceAfter < 0) throw new Error(`ledger entry would take ${line.wallet} below zero`);
  const inserted = await trx
    .insertInto('ledger_entries')
    .values({
      partner_id: line.partnerId,
      wallet: line.wallet,
      amount: line.amount,
      balance_after: balanceAfter,
      kind: line.kind,
      order_id: line.orderId,
      reference: line.reference,
      actor: line.actor,
      created_at: line.at,
    })
    .onConflict((oc) =>
      oc
        .columns(['partner_id', 'reference'])
        .where(sql<boolean>`kind = 'credit'`)
        .doNothing(),
    )
    .returning('id')
    .executeTakeFirst();
  if (!inserted) return null;
  const updated = await trx
    .updateTable('wallets')
    .set({ [line.wallet]: balanceAfter, updated_at: line.at })
    .where('partner_id', '=', line.partnerId)
    .returningAll()
    .executeTakeFirstOrThrow();
  return { wallet: updated, entryId: inserted.id };
}

/** Whether a credit with this reference is already in the partner's ledger. */
export async function creditBooked(
  trx: Transaction<DB>,
  partnerId: string,
  reference: string,
): Promise<boolean> {
  const row = await trx
    .selectFrom('ledger_entries')
    .select('id')
    .where('partner_id', '=', partnerId)
    .where('reference', '=', reference)
    .where('kind', '=', 'credit')
    .executeTakeFirst();
  return row !== undefined;
}

export type LedgerRow = Selectable<LedgerEntriesTable>;

/**
 * What pay-order-from-balance reads when its statement ({@link payOrderFromWallet}) refused: the
 * order with its items, and what the checks that precede the order in decision 0012 need (has the
 * partner a wallet, the operator's spending switch), in one round trip and outside any transaction
 * (nothing is locked), to answer the first check that refuses. undefined when no such order exists.
 */
export async function readOrderForWalletPayment(
  db: Db,
  id: string,
  partnerId: string,
  spendingKey: string,
): Promise<
  { order: OrderRow; items: OrderItemRow[]; hasWallet: boolean; spending: boolean | null } | undefined
> {
  const { rows } = await readForWalletPaymentStatement(db, { id, partnerId, spendingKey });
  const row = rows[0];
  if (!row) return undefined;
  const { _items, _has_wallet, _spending, ...order } = row;
  return { order, items: _items, hasWallet: _has_wallet, spending: _spending };
}

const readForWalletPaymentStatement = compiledOnce(
  (db, a: { id: string; partnerId: string; spendingKey: string }) =>
    db
      .selectFrom('orders')
      .selectAll('orders')
      .select([
        sql<
          OrderItemRow[]
        >`(select coalesce(json_agg(i order by i.idx), '[]'::json) from order_items i where i.order_id = orders.id)`.as(
          '_items',
        ),
        sql<boolean>`exists (select 1 from wallets w where w.partner_id = ${a.partnerId})`.as('_has_wallet'),
        sql<boolean | null>`(select s.value from settings s where s.key = ${a.spendingKey})`.as('_spending'),
      ])
      .where('id', '=', a.id),
);

/** What {@link payOrderFromWallet} did. */
export type WalletPayment =
  | { outcome: 'paid'; order: OrderRow; wallet: SpendableWallet; entryId: number | null }
  /** Every check passed but neither sub-wallet covers the price: nothing changed. */
  | { outcome: 'insufficient' }
  /**
   * Nothing changed: the order is not (or no longer) a draft this partner can pay from its wallet
   * now, by one of the checks of decision 0012 before the balance; which one, the caller finds out.
   */
  | { outcome: 'refused' };

/** What pay-order-from-balance checks besides the order's own state, as the statement is given them. */
export interface WalletPaymentRules {
  /** The settings key of the operator's spending switch (absent: spending allowed). */
  spendingKey: string;
  /** The products a wallet may pay for: an order holding any other is refused. */
  eligible: readonly string[];
  /** Per product with a payability rule, the creation times whose orders can be paid now. */
  windows: ReadonlyMap<string, { from: number; until: number }>;
}

/** One payment of a batch: its order, the payment recorded on it, and its instant. */
export interface WalletPaymentJob {
  orderId: string;
  /** The order's payment before the statement adds amount_bani, receipt_id and wallet. */
  payment: Record<string, unknown>;
  at: Date;
}

/** Who pays, by which rules, and what the order's event says: the same for every job of a batch. */
interface WalletPayer {
  partnerId: string;
  rules: WalletPaymentRules;
  reason: string;
  actor: string;
}

/**
 * One wallet payment, in one round trip: one statement, its own transaction (autocommit) on the
 * service's database, which checks, pays and books, or changes nothing.
 *
 * It locks the order while every check of decision 0012 before the balance passes
 * ({@link payableGuards}). Then it locks the wallet (order first, wallet second, as everywhere);
 * chooses the sub-wallet ({@link payingSubWalletSql}); and books what it decided
 * ({@link bookDecided}): the order moves draft → paid with its payment and event, the sub-wallet is
 * debited, the ledger entry appended, the order queued for issuance, and the paid order answered.
 * Either all of it happens or none: the statement is atomic, and it raises if a covered payment
 * was not booked whole.
 *
 * Every payment of a partner queues on the wallet row, so the row is held only while the server
 * runs this statement and commits it, never across a round trip to the service (decision 0026).
 */
export async function payOrderFromWallet(db: Db, p: WalletPayer & WalletPaymentJob): Promise<WalletPayment> {
  assertTransition(WALLET_PAYMENT.from, WALLET_PAYMENT.to);
  const { rows } = await payStatement(db, {
    ...guardArgs(p),
    id: p.orderId,
    at: p.at,
    payment: JSON.stringify(p.payment),
  });
  return outcome(rows[0]!, p.orderId);
}

/**
 * Wallet payments of one partner, in one statement and one round trip (one commit on the service's
 * database), each checked, paid and booked as {@link payOrderFromWallet} does it or not changed at
 * all: one answer a job, in order. What a batch saves is a hot wallet's: one commit (one WAL flush)
 * and one round trip a payment limit how fast one wallet can pay (decision 0026). A payment alone
 * goes through payOrderFromWallet, whose statement costs the server less.
 *
 * It locks, in id order, each job's order while the checks before the balance pass at the job's
 * instant ({@link payableGuards}). An order named twice is paid at most once, by its first job; the
 * second is refused, as it would be a moment later (bookWalletPayments sends an order once a
 * statement). Then it locks the wallet (orders first, wallet second, as everywhere, so two batches
 * never wait on each other in a cycle), and goes through the
 * locked orders in the jobs' order, choosing each one's sub-wallet over the balances the earlier
 * ones left. A payment none covers changes nothing, and the next is judged on the same balances.
 * Then it books what it decided as the single payment does ({@link bookDecided}), the entries' ids
 * drawn in the payments' order (reconciliation's running sums follow ids).
 */
export async function payOrdersFromWallet(
  db: Db,
  p: WalletPayer & { jobs: readonly WalletPaymentJob[] },
): Promise<WalletPayment[]> {
  assertTransition(WALLET_PAYMENT.from, WALLET_PAYMENT.to);
  const { rows } = await payBatchStatement(db, {
    ...guardArgs(p),
    jobs: JSON.stringify(p.jobs.map((j) => ({ id: j.orderId, payment: j.payment, at: j.at.toISOString() }))),
    ids: p.jobs.map((j) => j.orderId),
  });
  if (rows.length !== p.jobs.length)
    throw new Error('the wallet payments statement answered another number of jobs');
  return rows.map((row, i) => {
    if (row._n !== i + 1) throw new Error('the wallet payments statement answered its jobs out of order');
    return outcome(row, p.jobs[i]!.orderId);
  });
}

function outcome(row: PayRow, orderId: string): WalletPayment {
  const { _n, _found, _wallet, _entry_id, _moved, _refused, ...order } = row;
  if (!_found) return { outcome: 'refused' };
  if (!_wallet) return { outcome: 'insufficient' };
  // Never: the order was locked as a draft, and the statement raises when a covered one did not move.
  if (!_moved) throw new Error(`order ${orderId} changed under its row lock`);
  return { outcome: 'paid', order, wallet: _wallet, entryId: _entry_id };
}

/** A window's end as PostgreSQL reads a timestamptz: ±infinity for an open end. */
const instantText = (ms: number) =>
  Number.isFinite(ms) ? new Date(ms).toISOString() : ms > 0 ? 'infinity' : '-infinity';

type GuardArgs = {
  partnerId: string;
  spendingKey: string;
  eligible: readonly string[];
  windowProducts: string[];
  windowFrom: string[];
  windowUntil: string[];
  reason: string;
  actor: string;
};

function guardArgs(p: WalletPayer): GuardArgs {
  const windows = [...p.rules.windows];
  return {
    partnerId: p.partnerId,
    spendingKey: p.rules.spendingKey,
    eligible: p.rules.eligible,
    windowProducts: windows.map(([product]) => product),
    windowFrom: windows.map(([, w]) => instantText(w.from)),
    windowUntil: windows.map(([, w]) => instantText(w.until)),
    reason: p.reason,
    actor: p.actor,
  };
}

/**
 * Each check of decision 0012 before the balance (walletRefusal, src/domain/wallet.ts), as the
 * condition on the row of `orders` under which it passes at the payment's instant `at`. One per
 * check of WALLET_CHECKS, which the type demands: a check added to the rule does not compile until
 * the statements apply it too.
 */
const passes = (a: GuardArgs, at: RawBuilder<unknown>): Record<WalletCheck, RawBuilder<boolean>> => ({
  wallet: sql`exists (select 1 from wallets w where w.partner_id = ${a.partnerId})`,
  // As the rule reads the switch: on unless it is false.
  spending: sql`coalesce((select s.value from settings s where s.key = ${a.spendingKey}), 'true') <> 'false'::jsonb`,
  order: sql`orders.partner_id = ${a.partnerId}`,
  // inWindow (src/domain/payment.ts) for each item whose product has a window.
  window: sql`not exists (
          select 1 from order_items i
          join unnest(${a.windowProducts}::text[], ${a.windowFrom}::timestamptz[], ${a.windowUntil}::timestamptz[])
            as r (product, from_at, until_at) on r.product = i.product
          where i.order_id = orders.id and not (orders.created_at >= r.from_at and orders.created_at < r.until_at))`,
  // A draft whose effectiveStatus is still draft: its expiry instant not yet reached.
  status: sql`orders.status = ${sql.lit(WALLET_PAYMENT.from)} and orders.expires_at > ${at}`,
  // walletEligible: no item of a product outside the list.
  eligible: sql`not exists (
          select 1 from order_items i
          where i.order_id = orders.id and i.product <> all (${a.eligible}::text[]))`,
});

/** Every check of decision 0012 before the balance passes: the order may be locked for payment. */
const payableGuards = (a: GuardArgs, at: RawBuilder<unknown>) => {
  const pass = passes(a, at);
  return sql<boolean>`${sql.join(
    WALLET_CHECKS.map((check) => pass[check]),
    sql`\n        and `,
  )}`;
};

/**
 * payingSubWallet (src/domain/wallet.ts) in SQL, built from the same list: the first of
 * PAYING_SUB_WALLETS whose balance in the row `balances` covers `price`, else null.
 */
const payingSubWalletSql = (balances: string, price: RawBuilder<unknown>) =>
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

const PAYING_COLUMNS = sql.join(PAYING_SUB_WALLETS.map((w) => sql.id(w)));

/**
 * The decided payments `decided` (one row each: the job's number n, the order's id and price, the
 * payment and instant, the paying sub-wallet `sub` or null, and each sub-wallet's balance after it)
 * with the sub-wallet's balance after it and its ledger entry's id, drawn in the jobs' order (a
 * volatile output is computed after the sort) and only for a payment that books one (booksEntry).
 */
const decided = (rows: RawBuilder<unknown>) => sql`x as (
      select p.*,
             case p.sub ${sql.join(
               PAYING_SUB_WALLETS.map((w) => sql`when ${sql.lit(w)} then ${sql.ref(`p.${w}`)}`),
               sql` `,
             )} end as balance_after,
             case when p.sub is not null and p.price > 0
                  then nextval('ledger_entries_id_seq'::regclass) end as entry_id
      from (${rows}) p
      order by p.n
    )`;

/**
 * What a wallet payment does once `x` ({@link decided}) has decided it, the same for one payment
 * and a batch: the order moves from WALLET_PAYMENT.from to .to with its payment (the receipt naming
 * the ledger entry and the sub-wallet) and its event, as transition() does; the wallet takes the
 * balances the last booked payment left; each booked payment appends its entry with its
 * balance_after; each paid order is queued for issuance (the outbox). One answer row per job of
 * `job`, in order: what it did and the paid order. It raises, changing nothing, if a covered
 * payment was not booked whole. `orderKey` names the orders by key again, so the planner finds
 * them by index.
 */
const bookDecided = (a: GuardArgs, orderKey: RawBuilder<boolean>) => sql`
    o as (
      update orders set
        status = ${sql.lit(WALLET_PAYMENT.to)},
        payment = x.payment || jsonb_build_object(
          'amount_bani', x.price, 'receipt_id', ${sql.lit(RECEIPT_PREFIX)} || coalesce(x.entry_id, 0), 'wallet', x.sub),
        payment_method = ${sql.lit(WALLET_PAYMENT.method)},
        paid_at = x.at,
        updated_at = x.at
      from x where orders.id = x.id and orders.status = ${sql.lit(WALLET_PAYMENT.from)} and x.sub is not null
        and ${orderKey}
      returning orders.*
    ), booked as (
      -- Every covered payment moved its order, or the statement raises (whole).
      select * from x where entry_id is not null
    ), d as (
      update wallets set ${sql.join(PAYING_SUB_WALLETS.map((w) => sql`${sql.id(w)} = ${sql.ref(`last.${w}`)}`))},
                         updated_at = (select max(at) from booked)
      from (select * from booked order by n desc limit 1) last
      where wallets.partner_id = ${a.partnerId}
      returning 1
    ), l as (
      insert into ledger_entries
        (id, partner_id, wallet, amount, balance_after, kind, order_id, reference, actor, created_at)
      select entry_id, ${a.partnerId}, sub, -price, balance_after, 'payment', id, null, ${a.actor}, at
      from booked
    ), e as (
      insert into order_events (order_id, from_status, to_status, reason, actor, at)
      select o.id, ${sql.lit(WALLET_PAYMENT.from)}, ${sql.lit(WALLET_PAYMENT.to)}, ${a.reason}::text, ${a.actor}::text, o.paid_at
      from o
    ), q as (
      insert into issuance_outbox (order_id, queued_at) select o.id, o.paid_at from o
    ), whole as (
      -- Never false: every covered payment moved its order and the wallet was debited if any booked.
      -- If it were, the statement raises and nothing of it commits.
      select (select count(*) from o) = (select count(*) from x where sub is not null)
         and (select count(*) from d) = (select least(count(*), 1) from booked) as ok
    )
    select job.n as _n, x.id is not null as _found, x.sub as _wallet, x.entry_id as _entry_id,
           o.id is not null as _moved,
           case when not whole.ok
                then polita_refuse('wallet payments not booked whole for partner ' || ${a.partnerId}) end as _refused,
           o.*
    from job cross join whole
    left join x on x.n = job.n
    left join o on o.id = x.id
    order by job.n`;

const payStatement = compiledOnce((db, a: GuardArgs & { id: string; at: Date; payment: string }) => {
  const at = sql`${a.at}::timestamptz`;
  const statement = sql<PayRow>`
    with job as (
      select 1::bigint as n
    ), ol as (
      select id, price from orders
      where id = ${a.id}
        and ${payableGuards(a, at)}
      for update
    ), w as (
      select ol.id, ol.price, ${payingSubWalletSql('wallets', sql`ol.price`)} as sub,
             ${sql.join(PAYING_SUB_WALLETS.map((w) => sql.ref(`wallets.${w}`)))}
      from wallets, ol where wallets.partner_id = ${a.partnerId}
      for update of wallets
    ), ${decided(sql`
      select 1::bigint as n, w.id, w.price, ${a.payment}::jsonb as payment, ${at} as at, w.sub,
             ${balancesAfter('w', sql`w.sub`, sql`w.price`)}
      from w`)}, ${bookDecided(a, sql`orders.id = ${a.id}`)}`;
  return { compile: () => statement.compile(db) };
});

const payBatchStatement = compiledOnce((db, a: GuardArgs & { jobs: string; ids: string[] }) => {
  const statement = sql<PayRow>`
    with recursive job as (
      select n, j->>'id' as id, j->'payment' as payment, (j->>'at')::timestamptz as at
      from jsonb_array_elements(${a.jobs}::jsonb) with ordinality as r (j, n)
    ), first_job as (
      select distinct on (id) id, n, payment, at from job order by id, n
    ), ol as (
      select orders.id, orders.price, first_job.n, first_job.payment, first_job.at
      from orders join first_job on first_job.id = orders.id
      -- The ids as an array parameter too, so that the orders are found by their key: the planner
      -- cannot see how few the jobs' rows are, and would otherwise walk every open draft.
      where orders.id = any (${a.ids}::text[])
        and ${payableGuards(a, sql`first_job.at`)}
      order by orders.id
      for update of orders
    ), wl as (
      select ${PAYING_COLUMNS} from wallets
      where partner_id = ${a.partnerId} and exists (select 1 from ol)
      for update
    ), seq as (
      select row_number() over (order by n) as k, id, n, price, payment, at from ol
    ), fold (k, sub, ${PAYING_COLUMNS}) as (
      -- The balances after each payment in the jobs' order, and the sub-wallet each was taken from.
      select 0::bigint, null::text, ${PAYING_COLUMNS} from wl
      union all
      select s.k, c.sub, ${balancesAfter('f', sql`c.sub`, sql`s.price`)}
      from fold f join seq s on s.k = f.k + 1
      cross join lateral (select ${payingSubWalletSql('f', sql`s.price`)} as sub) c
    ), ${decided(sql`
      select s.n, s.id, s.price, s.payment, s.at, f.sub, ${sql.join(PAYING_SUB_WALLETS.map((w) => sql.ref(`f.${w}`)))}
      from fold f join seq s on s.k = f.k`)}, ${bookDecided(a, sql`orders.id = any (${a.ids}::text[])`)}`;
  return { compile: () => statement.compile(db) };
});

/** A statement's row for each job: what it did, and the paid order's columns (null when it changed nothing). */
type PayRow = {
  _n: number;
  _found: boolean;
  _wallet: SpendableWallet | null;
  _entry_id: number | null;
  _moved: boolean;
  _refused: null;
} & OrderRow;

/**
 * Ledger entries whose balance_after is not the running sum of their sub-wallet's entries up to
 * them (or whose running sum is negative): for reconciliation.
 */
export async function brokenRunningSums(db: Db) {
  const { rows } = await sql<{
    id: number;
    partner_id: string;
    wallet: string;
    balance_after: number;
    running: string | number;
  }>`
    select id, partner_id, wallet, balance_after, running from (
      select id, partner_id, wallet, balance_after,
             sum(amount) over (partition by partner_id, wallet order by id) as running
      from ledger_entries) t
    where running <> balance_after or running < 0
    order by id`.execute(db);
  return rows.map((r) => ({ ...r, running: Number(r.running) }));
}

/** The ledger entries that moved money for an order (its payment and any refund), oldest first. */
export async function orderLedger(db: Db, orderId: string): Promise<LedgerRow[]> {
  return db.selectFrom('ledger_entries').selectAll().where('order_id', '=', orderId).orderBy('id').execute();
}

/** A partner's entries, newest first, a page at a time (keyset on id). */
export async function ledgerPage(
  db: Db,
  partnerId: string,
  f: { limit: number; beforeId?: number },
): Promise<LedgerRow[]> {
  let q = db.selectFrom('ledger_entries').selectAll().where('partner_id', '=', partnerId);
  if (f.beforeId !== undefined) q = q.where('id', '<', f.beforeId);
  return q.orderBy('id', 'desc').limit(f.limit).execute();
}

/** A partner's entries with created_at in [from, to), in booking order. */
export async function ledgerBetween(db: Db, partnerId: string, from: Date, to: Date): Promise<LedgerRow[]> {
  return db
    .selectFrom('ledger_entries')
    .selectAll()
    .where('partner_id', '=', partnerId)
    .where('created_at', '>=', from)
    .where('created_at', '<', to)
    .orderBy('id')
    .execute();
}

/** Per sub-wallet, the sum of a partner's entries booked before `before` (all of them without it). */
export async function ledgerSums(
  db: Db,
  partnerId: string,
  before?: Date,
): Promise<Record<SubWallet, number>> {
  let q = db
    .selectFrom('ledger_entries')
    .select((eb) => ['wallet', eb.fn.sum<string | number>('amount').as('total')])
    .where('partner_id', '=', partnerId);
  if (before) q = q.where('created_at', '<', before);
  const rows = await q.groupBy('wallet').execute();
  const sums: Record<SubWallet, number> = { online: 0, insurance: 0, promo: 0 };
  for (const r of rows) sums[r.wallet] = Number(r.total);
  return sums;
}

export async function allWallets(db: Db): Promise<WalletRow[]> {
  return db.selectFrom('wallets').selectAll().orderBy('partner_id').execute();
}

/** Per partner and sub-wallet, the sum of every ledger entry. */
export async function allLedgerSums(
  db: Db,
): Promise<{ partner_id: string; wallet: SubWallet; total: number; n: number }[]> {
  const rows = await db
    .selectFrom('ledger_entries')
    .select((eb) => [
      'partner_id',
      'wallet',
      eb.fn.sum<string | number>('amount').as('total'),
      eb.fn.countAll<number>().as('n'),
    ])
    .groupBy(['partner_id', 'wallet'])
    .execute();
  return rows.map((r) => ({ ...r, total: Number(r.total), n: Number(r.n) }));
}

/** Every entry tied to an order, for reconciliation. */
export async function orderLinkedEntries(db: Db): Promise<LedgerRow[]> {
  return db
    .selectFrom('ledger_entries')
    .selectAll()
    .where('order_id', 'is not', null)
    .orderBy('id')
    .execute();
}

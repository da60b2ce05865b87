import { sql, type Kysely, type Selectable, type Transaction } from 'kysely';
import { assertTransition } from '../../domain/order-state.ts';
import type { SpendableWallet } from '../../domain/wallet.ts';
import { compiledOnce } from '../compiled.ts';
import type { DB, LedgerEntriesTable, OrderItemRow, OrderRow, SubWallet, WalletRow } from '../schema.ts';

type Conn = Kysely<DB> | Transaction<DB>;

export async function findWallet(db: Conn, partnerId: string): Promise<WalletRow | undefined> {
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

export type LedgerRow = Selectable<LedgerEntriesTable>;

/**
 * What pay-order-from-balance reads when its statement ({@link payOrderFromWallet}) refused: the
 * order with its items, and what the checks that precede the order in decision 0012 need (has the
 * partner a wallet, the operator's spending switch), in one round trip and outside any transaction
 * (nothing is locked), to answer the first check that refuses. undefined when no such order exists.
 */
export async function readOrderForWalletPayment(
  db: Conn,
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
 * It locks the order while it is this partner's unexpired draft and every check of decision 0012
 * that precedes the balance passes ({@link payableGuards}). Then it locks the wallet (order first,
 * wallet second, as everywhere); chooses the sub-wallet (promo when it alone covers the price, else
 * online; this rule is written here and in {@link payOrdersFromWallet}); moves the order draft →
 * paid with its payment (the receipt naming the ledger entry and the sub-wallet) and its event, as
 * transition() does; debits the sub-wallet and appends the ledger entry with its balance_after;
 * queues the order for issuance (the outbox); and answers the paid order. Either all of it happens
 * or none: the debit is joined to the order's move, the entry to the debit, and the statement is
 * atomic.
 *
 * Every payment of a partner queues on the wallet row, so the row is held only while the server
 * runs this statement and commits it, never across a round trip to the service (decision 0026).
 * The entry's id is drawn first, so the order's receipt can name it
 * in the same statement. A free order debits nothing and books no entry (amounts are never zero):
 * its receipt is `wallet:0`, from promo.
 */
export async function payOrderFromWallet(
  db: Conn,
  p: WalletPayer & WalletPaymentJob,
): Promise<WalletPayment> {
  assertTransition('draft', 'paid');
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
 * It locks, in id order, each job's order while it is this partner's unexpired draft at the job's
 * instant and the checks before the balance pass ({@link payableGuards}). An order named twice is
 * paid at most once, by its first job; the second is refused, as it would be a moment later. Then
 * it locks the wallet (orders first, wallet second, as everywhere, so two batches never wait on
 * each other in a cycle), and goes through the locked orders in the jobs' order, choosing each
 * one's sub-wallet over the balances the earlier ones left. A payment neither covers changes
 * nothing, and the next is judged on the same balances. The wallet takes the last balances; each
 * covered payment moves its order, appends its ledger entry with its balance_after (the entries'
 * ids drawn in the payments' order: reconciliation's running sums follow ids), its event and its
 * place in the outbox. The statement raises, changing nothing, if any covered payment was not
 * booked whole.
 */
export async function payOrdersFromWallet(
  db: Conn,
  p: WalletPayer & { jobs: readonly WalletPaymentJob[] },
): Promise<WalletPayment[]> {
  assertTransition('draft', 'paid');
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
 * The checks of decision 0012 that precede the balance, on the row of `orders`: the partner has
 * a wallet, the operator's spending switch is not off, every product is wallet-eligible, and the
 * order's creation time lies in each of its products' payability windows (the RO tariff switch).
 */
const payableGuards = (a: GuardArgs) => sql<boolean>`
        exists (select 1 from wallets w where w.partner_id = ${a.partnerId})
        and coalesce((select s.value from settings s where s.key = ${a.spendingKey}), 'true') <> 'false'::jsonb
        and not exists (
          select 1 from order_items i
          where i.order_id = orders.id and i.product <> all (${a.eligible}::text[]))
        and not exists (
          select 1 from order_items i
          join unnest(${a.windowProducts}::text[], ${a.windowFrom}::timestamptz[], ${a.windowUntil}::timestamptz[])
            as r (product, from_at, until_at) on r.product = i.product
          where i.order_id = orders.id and not (orders.created_at >= r.from_at and orders.created_at < r.until_at))`;

const payStatement = compiledOnce((db, a: GuardArgs & { id: string; at: Date; payment: string }) => {
  const at = sql`${a.at}::timestamptz`;
  const statement = sql<PayRow>`
    with ol as (
      select id, price from orders
      where id = ${a.id} and partner_id = ${a.partnerId} and status = 'draft' and expires_at > ${at}
        and ${payableGuards(a)}
      for update
    ), w as (
      select ol.price,
             case when wallets.promo >= ol.price then 'promo' when wallets.online >= ol.price then 'online' end as sub
      from wallets, ol where wallets.partner_id = ${a.partnerId}
      for update of wallets
    ), x as (
      select sub, price, case when sub is not null and price > 0
                              then nextval('ledger_entries_id_seq'::regclass) end as entry_id
      from w
    ), o as (
      update orders set
        status = 'paid',
        payment = ${a.payment}::jsonb || jsonb_build_object(
          'amount_bani', x.price, 'receipt_id', 'wallet:' || coalesce(x.entry_id, 0), 'wallet', x.sub),
        payment_method = 'wallet',
        paid_at = ${at},
        updated_at = ${at}
      from ol, x where orders.id = ol.id and orders.status = 'draft' and x.sub is not null
      returning orders.*
    ), d as (
      update wallets set
        promo = case when x.sub = 'promo' then wallets.promo - x.price else wallets.promo end,
        online = case when x.sub = 'online' then wallets.online - x.price else wallets.online end,
        updated_at = ${at}
      from x, o where wallets.partner_id = ${a.partnerId} and x.entry_id is not null
      returning x.sub, x.entry_id, x.price,
                case when x.sub = 'promo' then wallets.promo else wallets.online end as balance_after
    ), l as (
      insert into ledger_entries
        (id, partner_id, wallet, amount, balance_after, kind, order_id, reference, actor, created_at)
      select d.entry_id, ${a.partnerId}, d.sub, -d.price, d.balance_after, 'payment', ${a.id}, null,
             ${a.actor}, ${at}
      from d
    ), e as (
      insert into order_events (order_id, from_status, to_status, reason, actor, at)
      select o.id, 'draft', 'paid', ${a.reason}::text, ${a.actor}::text, ${at} from o
      returning id
    ), q as (
      insert into issuance_outbox (order_id, queued_at) select o.id, ${at} from o
    )
    select 1 as _n, exists (select 1 from ol) as _found, x.sub as _wallet, x.entry_id as _entry_id,
           exists (select 1 from e) as _moved,
           -- Never true; if it were, the statement raises and nothing of it commits.
           case when exists (select 1 from o) <> exists (select 1 from e)
                  or (exists (select 1 from o) and x.price > 0 and not exists (select 1 from d))
                then polita_refuse('wallet payment not booked whole: ' || ${a.id}) end as _refused,
           o.*
    from (select) one left join x on true left join o on true`;
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
        and orders.partner_id = ${a.partnerId} and orders.status = 'draft' and orders.expires_at > first_job.at
        and ${payableGuards(a)}
      order by orders.id
      for update of orders
    ), wl as (
      select promo, online from wallets
      where partner_id = ${a.partnerId} and exists (select 1 from ol)
      for update
    ), seq as (
      select row_number() over (order by n) as k, id, n, price, payment, at from ol
    ), fold (k, sub, promo, online) as (
      -- The balances after each payment in the jobs' order, and the sub-wallet each was taken from.
      select 0::bigint, null::text, promo, online from wl
      union all
      select s.k, c.sub,
             f.promo - case when c.sub = 'promo' then s.price else 0 end,
             f.online - case when c.sub = 'online' then s.price else 0 end
      from fold f join seq s on s.k = f.k + 1
      cross join lateral (
        select case when f.promo >= s.price then 'promo' when f.online >= s.price then 'online' end as sub) c
    ), x as (
      -- The entries' ids drawn in the payments' order: a volatile output is computed after the sort.
      select s.k, s.id, s.n, s.price, s.payment, s.at, f.sub,
             case f.sub when 'promo' then f.promo when 'online' then f.online end as balance_after,
             case when f.sub is not null and s.price > 0
                  then nextval('ledger_entries_id_seq'::regclass) end as entry_id
      from fold f join seq s on s.k = f.k
      order by s.k
    ), o as (
      update orders set
        status = 'paid',
        payment = x.payment || jsonb_build_object(
          'amount_bani', x.price, 'receipt_id', 'wallet:' || coalesce(x.entry_id, 0), 'wallet', x.sub),
        payment_method = 'wallet',
        paid_at = x.at,
        updated_at = x.at
      from x where orders.id = x.id and orders.status = 'draft' and x.sub is not null
        and orders.id = any (${a.ids}::text[])
      returning orders.*
    ), booked as (
      select x.* from x join o on o.id = x.id where x.entry_id is not null
    ), last as (
      select promo, online from fold order by k desc limit 1
    ), d as (
      update wallets set promo = last.promo, online = last.online,
                         updated_at = (select max(at) from booked)
      from last where wallets.partner_id = ${a.partnerId} and exists (select 1 from booked)
      returning 1
    ), l as (
      insert into ledger_entries
        (id, partner_id, wallet, amount, balance_after, kind, order_id, reference, actor, created_at)
      select entry_id, ${a.partnerId}, sub, -price, balance_after, 'payment', id, null, ${a.actor}, at
      from booked
      returning 1
    ), e as (
      insert into order_events (order_id, from_status, to_status, reason, actor, at)
      select o.id, 'draft', 'paid', ${a.reason}::text, ${a.actor}::text, x.at from o join x on x.id = o.id
      returning order_id
    ), q as (
      insert into issuance_outbox (order_id, queued_at) select o.id, x.at from o join x on x.id = o.id
    ), whole as (
      -- Never false; if it were, the statement raises and nothing of it commits.
      select (select count(*) from o) = (select count(*) from x where sub is not null)
         and (select count(*) from e) = (select count(*) from o)
         and (select count(*) from l) = (select count(*) from booked)
         and (select count(*) from d) = (case when exists (select 1 from booked) then 1 else 0 end) as ok
    )
    select job.n as _n, x.id is not null as _found, x.sub as _wallet, x.entry_id as _entry_id,
           e.order_id is not null as _moved,
           case when not whole.ok
                then polita_refuse('wallet payments not booked whole for partner ' || ${a.partnerId}) end as _refused,
           o.*
    from job cross join whole
    left join x on x.n = job.n
    left join o on o.id = x.id
    left join e on e.order_id = x.id
    order by job.n`;
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
export async function brokenRunningSums(db: Conn) {
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
export async function orderLedger(db: Conn, orderId: string): Promise<LedgerRow[]> {
  return db.selectFrom('ledger_entries').selectAll().where('order_id', '=', orderId).orderBy('id').execute();
}

/** A partner's entries, newest first, a page at a time (keyset on id). */
export async function ledgerPage(
  db: Conn,
  partnerId: string,
  f: { limit: number; beforeId?: number },
): Promise<LedgerRow[]> {
  let q = db.selectFrom('ledger_entries').selectAll().where('partner_id', '=', partnerId);
  if (f.beforeId !== undefined) q = q.where('id', '<', f.beforeId);
  return q.orderBy('id', 'desc').limit(f.limit).execute();
}

/** A partner's entries with created_at in [from, to), in booking order. */
export async function ledgerBetween(db: Conn, partnerId: string, from: Date, to: Date): Promise<LedgerRow[]> {
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
  db: Conn,
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

export async function allWallets(db: Conn): Promise<WalletRow[]> {
  return db.selectFrom('wallets').selectAll().orderBy('partner_id').execute();
}

/** Per partner and sub-wallet, the sum of every ledger entry. */
export async function allLedgerSums(
  db: Conn,
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
export async function orderLinkedEntries(db: Conn): Promise<LedgerRow[]> {
  return db
    .selectFrom('ledger_entries')
    .selectAll()
    .where('order_id', 'is not', null)
    .orderBy('id')
    .execute();
}

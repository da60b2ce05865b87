import { sql, type Kysely, type Selectable, type Transaction } from 'kysely';
import type {
  DB,
  LedgerEntriesTable,
  OrderItemRow,
  OrderRow,
  PaymentData,
  SubWallet,
  WalletRow,
} from '../schema.ts';

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
 * pay-order-from-balance's first statement: the order locked with its items, and what the checks
 * that precede the order in decisions.md §5 need (has the partner a wallet, the operator's
 * spending switch), in one round trip. undefined when no such order exists.
 */
export async function lockOrderForWalletPayment(
  trx: Transaction<DB>,
  id: string,
  partnerId: string,
  spendingKey: string,
): Promise<
  { order: OrderRow; items: OrderItemRow[]; hasWallet: boolean; spending: boolean | null } | undefined
> {
  const row = await trx
    .selectFrom('orders')
    .selectAll('orders')
    .select([
      sql<
        OrderItemRow[]
      >`(select coalesce(json_agg(i order by i.idx), '[]'::json) from order_items i where i.order_id = orders.id)`.as(
        '_items',
      ),
      sql<boolean>`exists (select 1 from wallets w where w.partner_id = ${partnerId})`.as('_has_wallet'),
      sql<boolean | null>`(select s.value from settings s where s.key = ${spendingKey})`.as('_spending'),
    ])
    .where('id', '=', id)
    .forUpdate()
    .executeTakeFirst();
  if (!row) return undefined;
  const { _items, _has_wallet, _spending, ...order } = row;
  return { order, items: _items, hasWallet: _has_wallet, spending: _spending };
}

/** The message polita_refuse raises when neither sub-wallet covers a wallet payment. */
const INSUFFICIENT_REFUSAL = 'polita: no sub-wallet covers the price';

/**
 * The booking of a wallet payment as ONE statement, taken last in the transaction: lock the
 * wallet, pick the sub-wallet (promo if it alone covers the price, else online), debit it, append
 * the ledger entry with its balance_after, and move the order (locked by the caller, a draft)
 * to paid with its event and the payment naming the entry.
 *
 * Every payment of a partner queues on the wallet row, so how long it is held is the partner's
 * payment rate. The COMMIT travels in the same message (a simple query, so the
 * values are written into the text as escaped literals), and the row is held only while the
 * server executes and commits: no round trip to this process in between, which under load was
 * most of the hold. The caller's transaction must be one it opened itself with `begin` on this
 * connection; on success it is committed. When neither sub-wallet covers the price, the statement
 * raises, so nothing of the transaction commits, and this answers 'insufficient' (the caller
 * rolls back). An order that is no longer a draft under the caller's row lock is a bug: it raises
 * too, and that error is thrown.
 */
export async function debitForOrder(
  conn: Kysely<DB>,
  p: {
    partnerId: string;
    orderId: string;
    price: number;
    actor: string;
    at: Date;
    /** The payment without receipt_id and wallet, which come from the entry. */
    payment: Omit<PaymentData, 'receipt_id' | 'wallet'>;
  },
): Promise<'booked' | 'insufficient'> {
  if (!(p.price > 0)) throw new Error('debitForOrder needs a positive price');
  const price = `${integerLiteral(p.price)}::bigint`;
  const at = `${textLiteral(p.at.toISOString())}::timestamptz`;
  const partner = textLiteral(p.partnerId);
  const order = textLiteral(p.orderId);
  const actor = textLiteral(p.actor);
  const text = `
    with w as (
      select partner_id,
             case when promo >= ${price} then 'promo' when online >= ${price} then 'online' end as sub
      from wallets where partner_id = ${partner} for update
    ), d as (
      update wallets set
        promo = case when w.sub = 'promo' then wallets.promo - ${price} else wallets.promo end,
        online = case when w.sub = 'online' then wallets.online - ${price} else wallets.online end,
        updated_at = ${at}
      from w where wallets.partner_id = w.partner_id and w.sub is not null
      returning w.sub, case when w.sub = 'promo' then wallets.promo else wallets.online end as balance_after
    ), l as (
      insert into ledger_entries
        (partner_id, wallet, amount, balance_after, kind, order_id, reference, actor, created_at)
      select ${partner}, d.sub, -${price}, d.balance_after, 'payment', ${order}, null, ${actor}, ${at}
      from d
      returning id, wallet
    ), o as (
      update orders set
        status = 'paid', updated_at = ${at}, payment_method = 'wallet', paid_at = ${at},
        payment = ${textLiteral(JSON.stringify(p.payment))}::jsonb
          || jsonb_build_object('receipt_id', 'wallet:' || l.id, 'wallet', l.wallet)
      from l where orders.id = ${order} and orders.status = 'draft'
      returning orders.id, l.wallet
    ), e as (
      insert into order_events (order_id, from_status, to_status, reason, actor, at)
      select o.id, 'draft', 'paid', 'wallet payment from ' || o.wallet, ${actor}, ${at} from o
      returning id
    )
    select case
      when not exists (select 1 from l) then polita_refuse(${textLiteral(INSUFFICIENT_REFUSAL)})
      when not exists (select 1 from e) then polita_refuse(${textLiteral(`order ${p.orderId} changed under its row lock`)})
      else true
    end as booked; commit`;
  try {
    await sql.raw(text).execute(conn);
    return 'booked';
  } catch (err) {
    const e = err as { code?: string; message?: string };
    if (e.code === 'P0001' && e.message === INSUFFICIENT_REFUSAL) return 'insufficient';
    throw err;
  }
}

/** A SQL string literal, safe whatever the text holds (quotes doubled, backslashes in E'' form). */
export function textLiteral(value: string): string {
  if (value.includes('\0')) throw new Error('a SQL literal cannot hold a NUL character');
  const quoted = value.replaceAll("'", "''");
  return value.includes('\\') ? `E'${quoted.replaceAll('\\', '\\\\')}'` : `'${quoted}'`;
}

function integerLiteral(value: number): string {
  if (!Number.isSafeInteger(value)) throw new Error(`not a safe integer: ${value}`);
  return String(value);
}

/** The ledger entries that moved money for an order (its payment and any refund), oldest first. */
export async function orderLedger(db: Conn, orderId: string): Promise<LedgerRow[]> {
  return db.selectFrom('ledger_entries').selectAll().where('order_id', '=', orderId).orderBy('id').execute();
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

import { normalPhone } from '../../domain/phone.ts';
import DataLoader from 'dataloader';
import { sql, type Insertable, type Transaction, type Updateable } from 'kysely';
import { assertTransition, type OrderStatus } from '../../domain/order-state.ts';
import { compiledOnce, type Param } from '../compiled.ts';
import type { DB, NewOrderItem, OrderItemRow, OrderRow, OrdersTable, Db } from '../schema.ts';

/**
 * The draft, its items and its first event in one statement: atomic without a transaction, and
 * one database round trip (create-order's cost under load is round trips). Compiled once per shape
 * (columns and number of items).
 */
export async function insertOrder(
  db: Db,
  order: Omit<OrderRow, 'customer' | 'payment'> & { customer: string; payment: null },
  items: NewOrderItem[],
  actor: string,
): Promise<void> {
  const args: InsertOrderArgs = { actor, 'o.id': order.id, 'o.created_at': order.created_at };
  const orderColumns = Object.keys(order);
  for (const c of orderColumns) args[`o.${c}`] = order[c as keyof typeof order];
  const itemColumns = Object.keys(items[0] ?? {});
  items.forEach((item, i) => {
    for (const c of itemColumns) args[`${i}.${c}`] = item[c as keyof NewOrderItem];
  });
  await insertOrderStatement(db, args, `${orderColumns.join(',')}|${itemColumns.join(',')}|${items.length}`);
}

/** The order's first event: who created it, and when. */
type InsertOrderArgs = { actor: string; 'o.id': string; 'o.created_at': Date } & Record<string, unknown>;

/** Shape: the order's columns | the items' columns | how many items. */
const insertOrderStatement = compiledOnce((db, param: Param<InsertOrderArgs>, shape) => {
  const [orderColumns, itemColumns, count] = shape.split('|') as [string, string, string];
  const row = (prefix: string, columns: string): Record<string, unknown> =>
    Object.fromEntries(columns.split(',').map((c) => [c, param(`${prefix}.${c}`)]));
  const order = row('o', orderColumns) as Insertable<OrdersTable>;
  const items = Array.from({ length: Number(count) }, (_, i) => row(String(i), itemColumns) as NewOrderItem);
  return db
    .with('o', (q) => q.insertInto('orders').values(order).returning('id'))
    .with('i', (q) => q.insertInto('order_items').values(items).returning('order_id'))
    .insertInto('order_events')
    .values({
      order_id: param('o.id'),
      from_status: null,
      to_status: 'draft',
      reason: null,
      actor: param('actor'),
      at: param('o.created_at'),
    });
});

export async function findOrder(db: Db, id: string): Promise<OrderRow | undefined> {
  return db.selectFrom('orders').selectAll().where('id', '=', id).executeTakeFirst();
}

/** The order row locked until the transaction ends: concurrent payments of one order queue here. */
export async function lockOrder(trx: Transaction<DB>, id: string): Promise<OrderRow | undefined> {
  return trx.selectFrom('orders').selectAll().where('id', '=', id).forUpdate().executeTakeFirst();
}

/** The order's items as a JSON array, in order (every item column is JSON-safe: text, integers and jsonb). */
const itemsOfOrder = sql<
  OrderItemRow[]
>`(select coalesce(json_agg(i order by i.idx), '[]'::json) from order_items i where i.order_id = orders.id)`;

/** lockOrder and orderItems in one round trip: the items come back in the row of the locked order. */
export async function lockOrderWithItems(
  trx: Transaction<DB>,
  id: string,
): Promise<{ order: OrderRow; items: OrderItemRow[] } | undefined> {
  const { rows } = await lockOrderWithItemsStatement(trx, { id });
  const row = rows[0];
  if (!row) return undefined;
  const { _items, ...order } = row;
  return { order, items: _items };
}

const lockOrderWithItemsStatement = compiledOnce((db, param: Param<{ id: string }>) =>
  db
    .selectFrom('orders')
    .selectAll('orders')
    .select(itemsOfOrder.as('_items'))
    .where('id', '=', param('id'))
    .forUpdate(),
);

/**
 * The order and its items, unlocked and outside any transaction (get-order; issuance, which guards
 * each write by the status). The reads asked for during one turn of the event loop go as one
 * statement, at most 100 ids each (decision 0042), through one loader per database; nothing is
 * cached, so a read still sees what was committed before it was asked for.
 */
export function findOrderWithItems(
  db: Db,
  id: string,
): Promise<{ order: OrderRow; items: OrderItemRow[] } | undefined> {
  let loader = orderLoaders.get(db);
  if (!loader) {
    loader = new DataLoader(
      async (ids: readonly string[]) => {
        const { rows } = await ordersWithItemsStatement(db, { ids: [...ids] });
        const found = new Map(rows.map(({ _items, ...order }) => [order.id, { order, items: _items }]));
        return ids.map((id) => found.get(id));
      },
      // A turn, not DataLoader's default tick: the requests of a turn each read in a tick of their own.
      { cache: false, maxBatchSize: 100, batchScheduleFn: (send) => setImmediate(send) },
    );
    orderLoaders.set(db, loader);
  }
  return loader.load(id);
}

const orderLoaders = new WeakMap<
  Db,
  DataLoader<string, { order: OrderRow; items: OrderItemRow[] } | undefined>
>();

const ordersWithItemsStatement = compiledOnce((db, param: Param<{ ids: string[] }>) =>
  db
    .selectFrom('orders')
    .selectAll('orders')
    .select(itemsOfOrder.as('_items'))
    .where('id', '=', sql<string>`any(${param('ids')}::text[])`),
);

export async function orderItems(db: Db, orderId: string): Promise<OrderItemRow[]> {
  return db.selectFrom('order_items').selectAll().where('order_id', '=', orderId).orderBy('idx').execute();
}

/**
 * Move an order along the state machine, recording the event. Guarded by the current status in
 * SQL as well, so a transition computed from a stale read changes nothing and says so. One
 * statement: the event is inserted from the updated row, so none is recorded when the guard misses.
 */
export async function transition(
  trx: Transaction<DB>,
  id: string,
  from: OrderStatus,
  to: OrderStatus,
  e: {
    actor: string;
    reason?: string;
    at: Date;
    /** Plain values (no SQL expressions): the statement is compiled once per set of columns. */
    set?: Omit<Updateable<OrdersTable>, 'status' | 'updated_at'>;
  },
): Promise<boolean> {
  assertTransition(from, to);
  const args: TransitionArgs = { id, from, to, reason: e.reason ?? null, actor: e.actor, at: e.at };
  let shape = '';
  for (const [column, value] of Object.entries(e.set ?? {})) {
    if (value !== null && typeof value === 'object' && !(value instanceof Date)) {
      throw new Error(`transition: ${column} must be a value, not an expression`);
    }
    args[`set.${column}`] = value;
    shape += shape ? `,${column}` : column;
  }
  const { rows } = await transitionStatement(trx, args, shape);
  return rows.length > 0;
}

/** The move and its event; `set.<column>` for each further column set (the shape names them). */
type TransitionArgs = {
  id: string;
  from: OrderStatus;
  to: OrderStatus;
  reason: string | null;
  actor: string;
  at: Date;
} & Record<`set.${string}`, unknown>;

const transitionStatement = compiledOnce((db, param: Param<TransitionArgs>, shape) => {
  const set: Record<string, unknown> = {};
  for (const column of shape.split(',').filter(Boolean)) set[column] = param(`set.${column}`);
  return db
    .with('moved', (q) =>
      q
        .updateTable('orders')
        .set({ ...(set as Updateable<OrdersTable>), status: param('to'), updated_at: param('at') })
        .where('id', '=', param('id'))
        .where('status', '=', param('from'))
        .returning('id'),
    )
    .insertInto('order_events')
    .columns(['order_id', 'from_status', 'to_status', 'reason', 'actor', 'at'])
    .expression((eb) =>
      // Parameters in a select list have no column to take their type from: cast each.
      eb
        .selectFrom('moved')
        .select([
          'moved.id',
          sql<OrderStatus>`${param('from')}::text`.as('from_status'),
          sql<OrderStatus>`${param('to')}::text`.as('to_status'),
          sql<string | null>`${param('reason')}::text`.as('reason'),
          sql<string>`${param('actor')}::text`.as('actor'),
          sql<Date>`${param('at')}::timestamptz`.as('at'),
        ]),
    )
    .returning('order_events.id');
});

const itemIssuedStatement = compiledOnce(
  (
    db,
    param: Param<{
      orderId: string;
      idx: number;
      issued: string;
      fileToken: string;
      pdf: Uint8Array;
      at: Date;
    }>,
  ) =>
    db
      .with('item', (q) =>
        q
          .updateTable('order_items')
          .set({ issued: param('issued'), file_token: param('fileToken') })
          .where('order_id', '=', param('orderId'))
          .where('idx', '=', param('idx'))
          .returning(['order_id', 'idx']),
      )
      .insertInto('documents')
      .columns(['token', 'order_id', 'idx', 'pdf', 'created_at'])
      .expression((eb) =>
        eb
          .selectFrom('item')
          .select([
            sql<string>`${param('fileToken')}::text`.as('token'),
            'item.order_id',
            'item.idx',
            sql<Uint8Array>`${param('pdf')}::bytea`.as('pdf'),
            sql<Date>`${param('at')}::timestamptz`.as('created_at'),
          ]),
      ),
);

/**
 * An item issued: what the provider answered, and its policy PDF stored under a download token, in
 * one statement (issuance's cost is round trips, decision 0025).
 */
export async function setItemIssued(
  trx: Transaction<DB>,
  orderId: string,
  idx: number,
  issued: Record<string, unknown>,
  fileToken: string,
  pdf: Uint8Array,
  at: Date,
): Promise<void> {
  await itemIssuedStatement(trx, { orderId, idx, issued: JSON.stringify(issued), fileToken, pdf, at });
}

export async function findDocument(db: Db, token: string): Promise<Uint8Array | undefined> {
  const row = await db.selectFrom('documents').select('pdf').where('token', '=', token).executeTakeFirst();
  return row?.pdf;
}

/** A document with the status of its order (a refunded order's policy is cancelled). */
export async function findDocumentAndStatus(
  db: Db,
  token: string,
): Promise<{ pdf: Uint8Array; status: OrderStatus; replaced_at: Date | null } | undefined> {
  return db
    .selectFrom('documents as d')
    .innerJoin('orders as o', 'o.id', 'd.order_id')
    .select(['d.pdf', 'o.status', 'd.replaced_at'])
    .where('d.token', '=', token)
    .executeTakeFirst();
}

/** Drafts whose expiry instant has passed, persisted as expired; returns them. */
export async function expireDrafts(
  trx: Transaction<DB>,
  now: Date,
  limit: number,
): Promise<{ id: string; partner_id: string }[]> {
  const due = await trx
    .selectFrom('orders')
    .select(['id', 'partner_id'])
    .where('status', '=', 'draft')
    .where('expires_at', '<=', now)
    .orderBy('expires_at')
    .limit(limit)
    .forUpdate()
    .skipLocked()
    .execute();
  const done: { id: string; partner_id: string }[] = [];
  for (const row of due) {
    const { id } = row;
    if (
      await transition(trx, id, 'draft', 'expired', {
        actor: 'system',
        reason: 'not paid by 23:59:59',
        at: now,
      })
    ) {
      done.push(row);
    }
  }
  return done;
}

export interface OrderListFilter {
  partnerId?: string;
  status?: OrderStatus;
  /** Orders holding this product. */
  product?: string;
  /** Created at or after `from` and before `to`. */
  from?: Date;
  to?: Date;
  /**
   * Free text as an operator types it: an order id, a partner id, a plate or vehicle certificate
   * (in a product's description or issued fields), or the customer's phone (digits, any spacing).
   */
  q?: string;
  /**
   * Expiring soon: completed orders whose policy runs `minDays` or more and whose last day is from
   * `from` to `to` (yyyy-mm-dd), as the renewal notices count them (decision 0092).
   */
  ending?: { from: string; to: string; minDays: number };
  limit: number;
  /** Keyset cursor: created_at and id of the last row of the previous page. */
  after?: { createdAt: Date; id: string };
}

export async function listOrders(db: Db, f: OrderListFilter): Promise<OrderRow[]> {
  let q = db.selectFrom('orders').selectAll();
  if (f.partnerId) q = q.where('partner_id', '=', f.partnerId);
  if (f.status) q = q.where('status', '=', f.status);
  if (f.from) q = q.where('created_at', '>=', f.from);
  if (f.to) q = q.where('created_at', '<', f.to);
  if (f.ending) {
    q = q
      .where('status', '=', 'completed')
      .where('end_date', '>=', f.ending.from)
      .where('end_date', '<=', f.ending.to)
      .where(sql<boolean>`end_date::date - start_date::date + 1 >= ${f.ending.minDays}`);
  }
  if (f.product) {
    const product = f.product;
    q = q.where(({ exists, selectFrom }) =>
      exists(
        selectFrom('order_items as i')
          .select('i.idx')
          .whereRef('i.order_id', '=', 'orders.id')
          .where('i.product', '=', product),
      ),
    );
  }
  if (f.q) {
    const text = f.q.trim();
    const compact = text.replace(/[\s-]/g, '').toUpperCase();
    const digits = text.replace(/\D/g, '');
    // However the phone was typed, here or in the order (decision 0095).
    const phone = normalPhone(text);
    const like = `%${compact.replace(/[\\%_]/g, (c) => `\\${c}`)}%`;
    q = q.where((eb) =>
      eb.or([
        eb('orders.id', '=', text.toUpperCase()),
        eb('orders.partner_id', '=', text),
        ...(phone ? [eb('orders.customer_phone', '=', phone)] : []),
        ...(digits.length >= 6
          ? [eb(sql`regexp_replace(orders.customer->>'phone', '[^0-9]', '', 'g')`, 'like', `%${digits}%`)]
          : []),
        eb.exists(
          eb
            .selectFrom('order_items as i')
            .select('i.idx')
            .whereRef('i.order_id', '=', 'orders.id')
            .where((w) =>
              w.or([
                w(sql`upper(regexp_replace(i.description, '[[:space:]-]', '', 'g'))`, 'like', like),
                w(
                  sql`upper(regexp_replace(coalesce(i.issued->>'plate_number', ''), '[[:space:]-]', '', 'g'))`,
                  '=',
                  compact,
                ),
                w(sql`i.details->'request'->>'vehicle'`, '=', text),
              ]),
            ),
        ),
      ]),
    );
  }
  if (f.after) {
    const { createdAt, id } = f.after;
    q = q.where((eb) =>
      eb.or([
        eb('created_at', '<', createdAt),
        eb.and([eb('created_at', '=', createdAt), eb('id', '<', id)]),
      ]),
    );
  }
  return q.orderBy('created_at', 'desc').orderBy('id', 'desc').limit(f.limit).execute();
}

/** What reconciliation reads of an order. */
export type OrderBooks = Pick<
  OrderRow,
  'id' | 'partner_id' | 'status' | 'price' | 'payment_method' | 'payment'
>;

/** The next `limit` orders by id after `after` (from the first when undefined), as reconciliation reads them. */
export async function ordersAfter(db: Db, after: string | undefined, limit: number): Promise<OrderBooks[]> {
  let q = db
    .selectFrom('orders')
    .select(['id', 'partner_id', 'status', 'price', 'payment_method', 'payment'])
    .orderBy('id')
    .limit(limit);
  if (after !== undefined) q = q.where('id', '>', after);
  return q.execute();
}

/** An order's status history, oldest first, as the operator reads it: from → to, why, by whom, when. */
export async function orderEvents(db: Db, orderId: string) {
  return db
    .selectFrom('order_events')
    .select(['from_status as from', 'to_status as to', 'reason', 'actor', 'at'])
    .where('order_id', '=', orderId)
    .orderBy('id')
    .execute();
}

/** When the oldest paid order not yet issued was paid (migration 17's partial index answers it). */
export async function oldestAwaitingIssue(db: Db): Promise<Date | null> {
  const row = await db
    .selectFrom('orders')
    .select((eb) => eb.fn.min<Date | null>('paid_at').as('oldest'))
    .where('status', 'in', ['paid', 'processing'])
    .executeTakeFirst();
  return row?.oldest ?? null;
}

export async function countOrdersByStatus(db: Db): Promise<{ status: string; n: number }[]> {
  return db
    .selectFrom('orders')
    .select((eb) => ['status', eb.fn.countAll<number>().as('n')])
    .groupBy('status')
    .execute();
}

/**
 * A corrected item (decision 0088): its new request and dates, and either its re-issued fields and
 * document (`document`) or, when its provider re-issues it later (vignette:eu), its issued fields and
 * document cleared for issuance to fill. The previous document stays, marked replaced, so its URL
 * answers 410 from now on.
 */
export async function replaceItem(
  trx: Transaction<DB>,
  r: {
    orderId: string;
    idx: number;
    description: string;
    startDate: string | null;
    endDate: string | null;
    details: unknown;
    at: Date;
    document?: { issued: Record<string, unknown>; fileToken: string; pdf: Uint8Array };
  },
): Promise<void> {
  await trx
    .updateTable('documents')
    .set({ replaced_at: r.at })
    .where('order_id', '=', r.orderId)
    .where('idx', '=', r.idx)
    .where('replaced_at', 'is', null)
    .execute();
  await trx
    .updateTable('order_items')
    .set({
      description: r.description,
      start_date: r.startDate,
      end_date: r.endDate,
      details: JSON.stringify(r.details),
      issued: r.document ? JSON.stringify(r.document.issued) : null,
      file_token: r.document?.fileToken ?? null,
    })
    .where('order_id', '=', r.orderId)
    .where('idx', '=', r.idx)
    .execute();
  if (r.document) {
    await trx
      .insertInto('documents')
      .values({
        token: r.document.fileToken,
        order_id: r.orderId,
        idx: r.idx,
        pdf: r.document.pdf,
        created_at: r.at,
      })
      .execute();
  }
}

/** The order corrected: its dates as its items now say, when and by whom; once per order. */
export async function markCorrected(
  trx: Transaction<DB>,
  r: { orderId: string; startDate: string | null; endDate: string | null; actor: string; at: Date },
): Promise<boolean> {
  const res = await trx
    .updateTable('orders')
    .set({
      start_date: r.startDate,
      end_date: r.endDate,
      corrected_at: r.at,
      corrected_by: r.actor,
      updated_at: r.at,
    })
    .where('id', '=', r.orderId)
    .where('status', '=', 'completed')
    .where('corrected_at', 'is', null)
    .executeTakeFirst();
  return res.numUpdatedRows > 0n;
}

import { sql, type Kysely, type QueryExecutorProvider } from 'kysely';
import { normalPhone } from '../../domain/phone.ts';

/**
 * The customer's phone in E.164 beside what the partner sent (decision 0095), so `069123456` and
 * `+37369123456` find the same orders; the orders already held are given theirs here.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`alter table orders add column customer_phone text`.execute(db);
  await backfillCustomerPhones(db);
  await sql`create index orders_customer_phone on orders (customer_phone) where customer_phone is not null`.execute(
    db,
  );
}

/** Gives every order without one the E.164 form of its customer's phone, when it has one. */
export async function backfillCustomerPhones(db: QueryExecutorProvider): Promise<void> {
  const rows = await sql<{
    phone: string | null;
  }>`select distinct customer->>'phone' as phone from orders
    where customer_phone is null and customer->>'phone' is not null`.execute(db);
  for (const { phone } of rows.rows) {
    const normal = phone ? normalPhone(phone) : undefined;
    if (normal) {
      await sql`update orders set customer_phone = ${normal}
        where customer_phone is null and customer->>'phone' = ${phone}`.execute(db);
    }
  }
}

import { sql, type Kysely } from 'kysely';

export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`
-- get-order reads the orders of one turn by id (id = any($1)) and each one's items by order_id. A
-- b-tree grows a level as the table grows, and each id descends both trees. A hash index finds a
-- key in one bucket page at any size (decision 0028, npm run bench:reads). The primary keys stay:
-- only a b-tree enforces uniqueness and keeps the (order_id, idx) order.
-- 'if not exists': an operator may build them beforehand with create index concurrently under the
-- same names; otherwise writes to both tables wait for the build.
create index if not exists orders_id_hash on orders using hash (id);
create index if not exists order_items_order_hash on order_items using hash (order_id);
`.execute(db);
}

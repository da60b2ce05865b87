import { describe, expect, it } from 'vitest';
import { eventually, payment, rcaDraft, twoServicesOnOneDatabase } from './process.ts';

/**
 * Decision 0012: concurrent payments of one order across any number of instances on one
 * database: exactly one succeeds. Two real service processes on one PostgreSQL database.
 */
describe('two service processes on one PostgreSQL database', () => {
  const env = twoServicesOnOneDatabase();

  it('lets exactly one of 50 simultaneous confirm-order calls with different payments pay one draft', async () => {
    const { a, b, client } = env;
    expect(b.demo.secret).toBe(a.demo.secret); // one partner, stored once, whoever seeded it
    const draft = await rcaDraft(a);

    // Issuance starts within half a second of the payment and would turn the order `completed`
    // while the losers are still queued on the row lock. Holding the order's item rows keeps the
    // issuer from finishing (it writes them), not the payments (they only read them), so every
    // loser sees the order as the winner left it.
    await client.query('begin');
    await client.query('select 1 from order_items where order_id = $1 for update', [draft.id]);
    let replies;
    try {
      replies = await Promise.all(
        Array.from({ length: 50 }, (_, i) =>
          (i % 2 ? b : a).call<{ error?: string; message?: string; status: string; id?: string }>(
            'confirm-order',
            { id: draft.id, payment: payment(draft.price, `p${i}x${Date.now().toString(36)}`) },
          ),
        ),
      );
    } finally {
      await client.query('rollback');
    }

    const ok = replies.filter((r) => r.status === 200);
    const refused = replies.filter((r) => r.status !== 200);
    expect(ok, 'exactly one payment wins').toHaveLength(1);
    expect(ok[0]!.body).toMatchObject({ id: draft.id, status: 'paid' });
    expect(refused).toHaveLength(49);
    for (const r of refused) {
      expect(r.status).toBe(400);
      expect(r.body.error).toBe('Order is not payable (status paid)');
    }

    const paid = await client.query<{ n: string }>(
      `select count(*) as n from order_events where order_id = $1 and to_status = 'paid'`,
      [draft.id],
    );
    expect(Number(paid.rows[0]!.n), 'one paid event').toBe(1);

    // Released, the issuer completes the order exactly once.
    const done = await eventually('the order to complete', async () => {
      const r = await a.call<{ status: string }>('get-order', { id: draft.id });
      return r.body.status === 'completed' ? r : undefined;
    });
    expect(done.status).toBe(200);
    const completed = await client.query<{ n: string }>(
      `select count(*) as n from order_events where order_id = $1 and to_status = 'completed'`,
      [draft.id],
    );
    expect(Number(completed.rows[0]!.n)).toBe(1);
  }, 60_000);
});

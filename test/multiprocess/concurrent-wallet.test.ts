import { describe, expect, it } from 'vitest';
import {
  eventually,
  payment,
  rcaDraft,
  runReconcile,
  twoServicesOnOneDatabase,
  type Creds,
  type Reply,
} from './process.ts';
import { shuffledAttempts } from '../wallet/support.ts';

/**
 * Decision 0012: 1 000 payment attempts over 200 drafts of one partner, confirm-order and
 * pay-order-from-balance mixed, 50 in flight at once across two service processes on one
 * PostgreSQL database, with a wallet that can pay only part of them. Every draft is paid at most
 * once, no sub-wallet goes below zero, the wallet falls by exactly the prices of the orders it
 * paid, and `npm run reconcile` finds the books clean once issuance has settled.
 */
const DRAFTS = 200;
const ATTEMPTS = DRAFTS * 5;
const IN_FLIGHT = 50;
const toBani = (mdl: number) => Math.round(mdl * 100);

describe('wallet payments from two service processes on one PostgreSQL database', () => {
  const env = twoServicesOnOneDatabase();

  it(`pays each of ${DRAFTS} drafts at most once over ${ATTEMPTS} mixed attempts, never overdraws, and reconciles`, async () => {
    const { a, b, client } = env;
    const created = await a.admin<Creds & { wallet: boolean }>('POST', '/admin/partners', {
      name: 'Concurrent Wallet SRL',
      wallet: true,
    });
    expect(created.status, JSON.stringify(created.body)).toBe(201);
    expect(created.body.wallet).toBe(true);
    const partner: Creds = { id: created.body.id, secret: created.body.secret };

    // Drafts through both processes, over the offers so that prices differ.
    const drafts: { id: string; price: number }[] = [];
    for (let i = 0; i < DRAFTS; i += 20) {
      drafts.push(
        ...(await Promise.all(
          Array.from({ length: Math.min(20, DRAFTS - i) }, (_, k) =>
            rcaDraft((i + k) % 2 ? b : a, partner, i + k),
          ),
        )),
      );
    }
    expect(new Set(drafts.map((d) => d.id)).size).toBe(DRAFTS);

    // Enough for only part of the drafts, split so that both sub-wallets run dry.
    const cheapest = Math.min(...drafts.map((d) => toBani(d.price)));
    const credited = { online: cheapest * 50, promo: cheapest * 20 };
    for (const wallet of ['online', 'promo'] as const) {
      const r = await b.admin('POST', `/admin/partners/${partner.id}/wallet/credits`, {
        wallet,
        amount: credited[wallet] / 100,
        reference: `load-${wallet}`,
      });
      expect(r.status, JSON.stringify(r.body)).toBe(200);
    }

    const attempts = shuffledAttempts(drafts, ATTEMPTS);

    type Body = { error?: string; message?: string; status?: string; id?: string };
    const wins = new Map<string, number>();
    const unexpected: unknown[] = [];
    let insufficient = 0;
    let next = 0;
    const stamp = Date.now().toString(36);
    const started = Date.now();
    await Promise.all(
      Array.from({ length: IN_FLIGHT }, async () => {
        while (next < attempts.length) {
          const i = next++;
          const { d, wallet } = attempts[i]!;
          const p = i % 2 ? b : a;
          const request = wallet
            ? { endpoint: 'pay-order-from-balance', body: { id: d.id } }
            : {
                endpoint: 'confirm-order',
                body: { id: d.id, payment: payment(d.price, `w${i}x${stamp}`) },
              };
          let r: Reply<Body>;
          try {
            r = await p.call<Body>(request.endpoint, request.body, partner);
          } catch (err) {
            unexpected.push({ request, process: i % 2, error: String(err) });
            continue;
          }
          if (r.status === 200) wins.set(d.id, (wins.get(d.id) ?? 0) + 1);
          else if (r.status === 400 && String(r.body.error).startsWith('Insufficient balance'))
            insufficient++;
          else if (r.status !== 400 || !String(r.body.error).startsWith('Order is not payable'))
            unexpected.push({ request, process: i % 2, status: r.status, body: r.body });
        }
      }),
    );
    const ms = Date.now() - started;
    console.log(
      `${ATTEMPTS} payment attempts over ${DRAFTS} drafts, ${IN_FLIGHT} in flight on two processes: ${ms} ms, ` +
        `${wins.size} paid, ${insufficient} refused for insufficient balance`,
    );

    expect(unexpected).toEqual([]);
    expect(
      [...wins].filter(([, n]) => n !== 1),
      'no draft paid twice',
    ).toEqual([]);
    expect(insufficient, 'the wallet ran dry for some attempts').toBeGreaterThan(0);

    const ids = drafts.map((d) => d.id);
    const events = await client.query<{ order_id: string; n: string }>(
      `select e.order_id, count(*) as n from order_events e join orders o on o.id = e.order_id
        where o.partner_id = $1 and e.to_status = 'paid' group by e.order_id`,
      [partner.id],
    );
    expect(
      events.rows.filter((r) => Number(r.n) !== 1),
      'one paid event per paid order',
    ).toEqual([]);
    expect(events.rows.length).toBe(wins.size);
    expect(new Set(events.rows.map((r) => r.order_id))).toEqual(new Set(wins.keys()));

    const orders = await client.query<{
      id: string;
      status: string;
      payment_method: string | null;
      price: string;
    }>(`select id, status, payment_method, price from orders where partner_id = $1`, [partner.id]);
    expect(orders.rows.map((r) => r.id).sort()).toEqual([...ids].sort());
    expect(orders.rows.filter((r) => r.status !== 'draft').length).toBe(wins.size);
    const byWallet = orders.rows.filter((r) => r.payment_method === 'wallet');
    const byCustomer = orders.rows.filter((r) => r.payment_method === 'customer');
    expect(byWallet.length, 'some orders paid from the wallet').toBeGreaterThan(0);
    expect(byCustomer.length, 'some orders paid by the customer').toBeGreaterThan(0);
    expect(byWallet.length + byCustomer.length).toBe(wins.size);

    const w = await client.query<{ online: string; promo: string }>(
      `select online, promo from wallets where partner_id = $1`,
      [partner.id],
    );
    expect(w.rows).toHaveLength(1);
    const online = Number(w.rows[0]!.online);
    const promo = Number(w.rows[0]!.promo);
    expect(online).toBeGreaterThanOrEqual(0);
    expect(promo).toBeGreaterThanOrEqual(0);
    expect(credited.online + credited.promo - (online + promo), 'the wallet fell by what it paid').toBe(
      byWallet.reduce((s, r) => s + Number(r.price), 0),
    );

    // The two processes' workers issue the paid orders meanwhile; reconcile the settled books.
    await eventually(
      'every paid order of the partner to be issued',
      async () => {
        const r = await client.query<{ n: string }>(
          `select count(*) as n from orders where partner_id = $1 and status in ('paid','processing')`,
          [partner.id],
        );
        return Number(r.rows[0]!.n) === 0 ? true : undefined;
      },
      90_000,
    );
    const books = await runReconcile({ DATABASE_URL: env.url });
    expect(books.code, books.output).toBe(0);
  }, 180_000);
});

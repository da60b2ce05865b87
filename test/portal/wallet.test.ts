import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { addDays, localDate } from '../../src/domain/time.ts';
import { startHarness, type Creds, type Harness } from '../support/harness.ts';
import { paidRcaOrder } from '../support/orders.ts';
import { get, portalUser, type Signed } from './support.ts';

/**
 * Wallet in the portal: the balances, the ledger of a period with paging, and the period's statement
 * as the operator's statement CSV, byte for byte; the partner's own wallet only.
 */
let h: Harness;
let partner: Creds;
let accountant: Signed;
let today: string;
beforeAll(async () => {
  h = await startHarness();
  partner = await h.newPartner({ name: 'Agenția Nord' });
  accountant = await portalUser(h, partner.id, 'accountant');
  today = localDate(await h.service.svc.clock.now());
});
afterAll(async () => {
  await h?.close();
});

const credit = async (creds: Creds, amount: number, reference: string) =>
  expect(
    (
      await h.admin('POST', `/admin/partners/${creds.id}/wallet/credits`, {
        wallet: 'online',
        amount,
        reference,
      })
    ).status,
  ).toBe(200);

/** The references of the ledger rows a wallet page lists. */
const references = (html: string) =>
  [...html.slice(html.indexOf('id="ledger"')).matchAll(/<td>(REF-[^<]+)<\/td>/g)].map((m) => m[1]!);

describe('the wallet page', () => {
  it('tells a cashier it is not theirs, without the form or the ledger', async () => {
    const cashier = await portalUser(h, partner.id, 'cashier');
    const res = await get(h, '/portal/wallet', cashier.cookie);
    expect(res.statusCode).toBe(403);
    expect(res.body).toContain('role="alert"');
    expect(res.body).not.toContain('class="filters"');
    expect(res.body).not.toContain('id="ledger"');
  });

  it('shows the balances and the period’s ledger, 25 entries a page, newest first', async () => {
    for (let i = 1; i <= 27; i++) await credit(partner, i, `REF-${String(i).padStart(2, '0')}`);
    const res = await get(h, '/portal/wallet', accountant.cookie);
    expect(res.statusCode).toBe(200);
    expect(res.body).toMatch(/MDL\s378\.00/); // 1 + 2 + … + 27, as Intl writes it in English
    expect(res.body).toContain(`value="${today.slice(0, 8)}01"`);
    expect(res.body).toContain(`value="${today}"`);
    const first = references(res.body);
    expect(first).toHaveLength(25);
    expect(first[0]).toBe('REF-27');
    const older = /<a href="([^"]+)">Older entries<\/a>/.exec(res.body)![1]!.replaceAll('&amp;', '&');
    const second = references((await get(h, older, accountant.cookie)).body);
    expect(second).toEqual(['REF-02', 'REF-01']);

    // Another period holds none of them.
    const before = addDays(today, -40);
    const empty = await get(h, `/portal/wallet?from=${before}&to=${addDays(before, 1)}`, accountant.cookie);
    expect(references(empty.body)).toEqual([]);
    expect(empty.body).toContain('No entries in this period.');
  });

  it('exports the period as the operator’s statement CSV, byte for byte', async () => {
    await credit(partner, 5000, 'REF-TOP-UP');
    const id = await paidRcaOrder(h, partner, today, { via: 'pay-order-from-balance' });
    await h.waitForStatus(id, 'completed', { creds: partner });
    const from = addDays(today, -3);
    const csv = await get(h, `/portal/wallet/statement.csv?from=${from}&to=${today}`, accountant.cookie);
    expect(csv.statusCode).toBe(200);
    expect(csv.headers['content-type']).toBe('text/csv; charset=utf-8');
    expect(csv.headers['content-disposition']).toBe(
      `attachment; filename="statement-${partner.id}-${from}-${today}.csv"`,
    );
    const operator = await h.service.app.inject({
      method: 'GET',
      url: `/admin/partners/${partner.id}/wallet/statement?from=${from}&to=${today}&format=csv`,
      headers: { authorization: `Bearer ${h.adminToken}` },
    });
    expect(operator.statusCode).toBe(200);
    expect(csv.body).toBe(operator.body);
    expect(csv.body.split('\r\n')[0]).toBe(
      'date,wallet,kind,amount,balance,order_id,reference,actor,entry_id',
    );
    expect(csv.body).toContain(`,online,payment,`);
    expect(csv.body).toContain(id);
  });

  it('refuses a period that is not one, with the reason', async () => {
    for (const [query, reason] of [
      [`?from=${today}&to=${addDays(today, -1)}`, 'From must not be after To'],
      ['?from=2026-02-30', 'From and To must be dates, like 2026-09-30'],
      ['?cursor=abc', 'This page of the list is no longer valid: open the list from its first page.'],
    ]) {
      const res = await get(h, `/portal/wallet${query}`, accountant.cookie);
      expect(res.statusCode, query).toBe(400);
      expect(res.body).toContain(reason);
    }
    expect(
      (await get(h, `/portal/wallet/statement.csv?from=${today}&to=2020-01-01`, accountant.cookie))
        .statusCode,
    ).toBe(400);
  });

  it('says when the partner has no wallet, and shows only the user’s own partner’s', async () => {
    const bare = await h.newPartner({ wallet: false });
    const u = await portalUser(h, bare.id, 'owner');
    const res = await get(h, '/portal/wallet', u.cookie);
    expect(res.statusCode).toBe(200);
    expect(res.body).toContain('Your account has no prepaid wallet');
    expect(res.body).not.toContain('REF-');
    expect((await get(h, '/portal/wallet/statement.csv', u.cookie)).statusCode).toBe(404);
  });
});

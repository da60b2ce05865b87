import { SYSTEM_ACTOR } from '../../src/app/actor.ts';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createOperator, disableOperator } from '../../src/app/admin/operators.ts';
import type { AuditEntry } from '../support/audit.ts';
import { harnessAt, rcaItem, type Harness } from '../support/harness.ts';
import { paidRcaOrder } from '../support/orders.ts';

/** Operators with roles, the audit log, and the /admin lists the console reads. */
const TODAY = '2026-11-21';
let h: Harness;
beforeAll(async () => (h = await harnessAt(`${TODAY}T12:00:00+02:00`)));
afterAll(() => h?.close());

/** An /admin call with another bearer token than the service's own. */
async function as(token: string, method: 'GET' | 'POST' | 'PATCH', url: string, body?: unknown) {
  const res = await h.service.app.inject({
    method,
    url,
    headers: {
      authorization: `Bearer ${token}`,
      ...(body !== undefined ? { 'content-type': 'application/json' } : {}),
    },
    ...(body !== undefined ? { payload: JSON.stringify(body) } : {}),
  });
  return { status: res.statusCode, body: res.json() as Record<string, unknown> };
}

const audit = async (q = '') =>
  (await h.admin<{ entries: AuditEntry[]; next_cursor: string | null }>('GET', `/admin/audit${q}`)).body;

describe('the audit log', () => {
  it('records who changed what through the API, with before and after', async () => {
    const p = await h.newPartner({ name: 'Audited SRL' });
    await h.admin('PATCH', `/admin/partners/${p.id}`, { name: 'Audited SRL 2', margin_bp: 150 });
    const { entries } = await audit(`?target=${p.id}`);
    expect(entries.map((e) => e.action)).toEqual(['partner.change', 'partner.create']);
    expect(entries[0]).toEqual({
      id: expect.any(Number),
      at: expect.stringMatching(/^2026-11-21T12:/),
      actor: 'admin-token',
      role: 'admin',
      via: 'api',
      action: 'partner.change',
      target: p.id,
      before: { name: 'Audited SRL', margin_bp: 0 },
      after: { name: 'Audited SRL 2', margin_bp: 150 },
    });
    // A secret never reaches the log.
    await h.admin('POST', `/admin/partners/${p.id}/secrets`);
    const all = JSON.stringify(await audit(`?target=${p.id}`));
    expect(all).toContain('partner.rotate_secret');
    expect(all).not.toContain(p.secret);
  });

  it('records credits, refunds and settings, and pages newest first', async () => {
    const p = await h.newPartner({ name: 'Refunded SRL' });
    await h.admin('POST', `/admin/partners/${p.id}/wallet/credits`, {
      wallet: 'online',
      amount: 5000,
      reference: 'audit-1',
    });
    const id = await paidRcaOrder(h, p, TODAY);
    await h.waitForStatus(id, 'completed', { creds: p });
    expect(
      (await h.admin('POST', `/admin/orders/${id}/refund`, { reason: 'customer cancelled' })).status,
    ).toBe(200);
    await h.admin('PUT', '/admin/settings', { balance_spending_enabled: true });
    const [credit] = (await audit(`?target=${p.id}`)).entries.filter((e) => e.action === 'wallet.credit');
    expect(credit).toMatchObject({ before: { online: 0 }, after: { online: 5000, reference: 'audit-1' } });
    expect((await audit(`?target=${id}`)).entries[0]).toMatchObject({
      action: 'order.refund',
      before: { status: 'completed' },
      after: { status: 'refunded', reason: 'customer cancelled' },
    });
    const first = await audit('?limit=2');
    expect(first.entries).toHaveLength(2);
    expect(first.entries[0]!.action).toBe('settings.change');
    const next = await audit(`?limit=2&cursor=${first.next_cursor}`);
    expect(next.entries[0]!).not.toEqual(first.entries[1]);
    expect((await h.admin('GET', '/admin/audit?cursor=x')).status).toBe(400);
  });
});

describe('operator roles', () => {
  it('a support token reads and re-sends webhooks, and is refused everything else', async () => {
    const support = await createOperator(h.service.svc, SYSTEM_ACTOR, {
      name: 'Ana (support)',
      role: 'support',
    });
    expect(support).toMatchObject({ id: expect.stringMatching(/^op_/), role: 'support', disabled_at: null });
    expect(support.token).toMatch(/^pol_/);
    const p = await h.newPartner({ name: 'Supported SRL' });
    const id = await paidRcaOrder(h, p, TODAY);
    await h.waitForStatus(id, 'completed', { creds: p });

    expect((await as(support.token, 'GET', `/admin/orders/${id}`)).status).toBe(200);
    expect((await as(support.token, 'GET', '/admin/partners')).status).toBe(200);
    // Metrics are for every operator, as /admin's reads are.
    const metrics = await h.service.app.inject({
      method: 'GET',
      url: '/metrics',
      headers: { authorization: `Bearer ${support.token}` },
    });
    expect(metrics.statusCode).toBe(200);
    // Allowed to re-send (the partner has no webhook URL: the attempt says so).
    expect(await as(support.token, 'POST', `/admin/orders/${id}/webhook`)).toMatchObject({
      status: 200,
      body: { delivered: false, error: 'no webhook URL registered' },
    });
    const refund = await as(support.token, 'POST', `/admin/orders/${id}/refund`, { reason: 'x' });
    const why = `The support role cannot POST /admin/orders/${id}/refund: it reads, and re-sends webhooks`;
    // A 4xx carries its reason in both fields, as every refusal of the service does.
    expect(refund).toEqual({ status: 403, body: { statusCode: 403, error: why, message: why } });
    const credit = await as(support.token, 'POST', `/admin/partners/${p.id}/wallet/credits`, {
      wallet: 'online',
      amount: 1,
      reference: 'no',
    });
    expect(credit.status).toBe(403);
    expect((await h.admin<{ status: string }>('GET', `/admin/orders/${id}`)).body.status).toBe('completed');
  });

  it("an admin operator's actions are its own in the log; a disabled token opens nothing", async () => {
    const admin = await createOperator(h.service.svc, SYSTEM_ACTOR, { name: 'Ion (admin)', role: 'admin' });
    const p = await h.newPartner({ name: 'Operated SRL' });
    expect((await as(admin.token, 'PATCH', `/admin/partners/${p.id}`, { disabled: true })).status).toBe(200);
    expect((await audit(`?actor=${admin.id}`)).entries[0]).toMatchObject({
      actor: admin.id,
      role: 'admin',
      via: 'api',
      action: 'partner.change',
      after: { disabled: true },
    });
    await disableOperator(h.service.svc, SYSTEM_ACTOR, admin.id);
    const metrics = await h.service.app.inject({
      method: 'GET',
      url: '/metrics',
      headers: { authorization: `Bearer ${admin.token}` },
    });
    expect(metrics.statusCode).toBe(403);
    expect((await as(admin.token, 'GET', '/admin/partners')).status).toBe(403);
    expect((await as('pol_not-a-token', 'GET', '/admin/partners')).status).toBe(403);
    await expect(createOperator(h.service.svc, SYSTEM_ACTOR, { name: 'x', role: 'root' })).rejects.toThrow(
      /role must be/,
    );
  });
});

describe('the lists the console reads', () => {
  it('finds orders by plate, phone, id and product, and partners by name', async () => {
    const p = await h.newPartner({ name: 'Căutare Auto SRL' });
    const created = await h.call<{ id: string }>(
      'create-order',
      { customer: { phone: '+373 69 123 987' }, products: [rcaItem(TODAY)] },
      p,
    );
    const id = created.body.id;
    const find = async (q: string) =>
      (await h.admin<{ orders: { id: string }[] }>('GET', `/admin/orders?${q}`)).body.orders.map((o) => o.id);
    expect(await find('q=chy%20999')).toContain(id);
    expect(await find('q=69123987')).toContain(id);
    expect(await find(`q=${id.toLowerCase()}`)).toEqual([id]);
    expect(await find(`q=CHY999&partner_id=${p.id}&product=rca&from=${TODAY}&to=${TODAY}`)).toEqual([id]);
    expect(await find(`q=CHY999&partner_id=${p.id}&product=green-card`)).toEqual([]);
    expect((await h.admin('GET', '/admin/orders?product=boat')).status).toBe(400);
    // Text the database cannot hold is refused before it is searched for.
    for (const url of ['/admin/orders?q=CHY%00999', '/admin/partners?q=a%00', '/admin/audit?target=%00']) {
      const bad = await h.admin<{ message: string }>('GET', url);
      expect({ url, status: bad.status }).toEqual({ url, status: 400 });
    }
    const partners = await h.admin<{ partners: { id: string; name: string }[] }>(
      'GET',
      '/admin/partners?q=c%C4%83utare',
    );
    expect(partners.body.partners.map((x) => x.id)).toEqual([p.id]);
  });

  it("pages a partner's ledger newest first, and exports it as CSV", async () => {
    const p = await h.newPartner({ name: 'Ledger SRL' });
    for (const ref of ['l-1', 'l-2', 'l-3']) {
      await h.admin('POST', `/admin/partners/${p.id}/wallet/credits`, {
        wallet: 'online',
        amount: 10,
        reference: ref,
      });
    }
    const first = await h.admin<{
      balance: number;
      ledger: { reference: string }[];
      next_cursor: string | null;
    }>('GET', `/admin/partners/${p.id}/wallet?limit=2`);
    expect(first.body.balance).toBe(30);
    expect(first.body.ledger.map((l) => l.reference)).toEqual(['l-3', 'l-2']);
    const rest = await h.admin<{ ledger: { reference: string }[]; next_cursor: string | null }>(
      'GET',
      `/admin/partners/${p.id}/wallet?limit=2&cursor=${first.body.next_cursor}`,
    );
    expect(rest.body).toMatchObject({ ledger: [{ reference: 'l-1' }], next_cursor: null });
    const csv = await h.service.app.inject({
      method: 'GET',
      url: `/admin/partners/${p.id}/wallet?format=csv`,
      headers: { authorization: `Bearer ${h.adminToken}` },
    });
    expect(csv.headers['content-type']).toBe('text/csv; charset=utf-8');
    expect(csv.body.split('\r\n')[0]).toBe(
      'entry_id,at,wallet,kind,amount,balance_after,order_id,reference,actor',
    );
    expect(csv.body).toContain(',online,credit,10,30,,l-3,operator');
  });
});

import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SYSTEM_ACTOR } from '../../src/app/actor.ts';
import { createOperator } from '../../src/app/admin/operators.ts';
import { OPERATOR_WRITES, type OperatorWrite } from '../../src/http/operator-roles.ts';
import { portalUser, post as portalPost } from '../portal/support.ts';
import type { AuditEntry } from '../support/audit.ts';
import { consoleFormPoster } from '../support/console.ts';
import { harnessAt, type Harness } from '../support/harness.ts';
import { paidRcaOrder } from '../support/orders.ts';

/**
 * Who acts (decision 0099): each surface hands its use cases the actor, and the audit log names it;
 * what each operator role may change is one table (src/http/operator-roles.ts), for the operator
 * API and the console alike.
 */
const TODAY = '2026-11-21';
let h: Harness;
beforeAll(async () => (h = await harnessAt(`${TODAY}T12:00:00+02:00`)));
afterAll(() => h?.close());

const lastAudit = async (target: string) =>
  (await h.admin<{ entries: AuditEntry[] }>('GET', `/admin/audit?target=${encodeURIComponent(target)}`)).body
    .entries[0];

const inject = (token: string, method: string, url: string) =>
  h.service.app.inject({
    method: method as 'POST',
    url,
    headers: { authorization: `Bearer ${token}` },
  });

describe('the audit log names who acted', () => {
  it('an operator through the API and the console, a portal user, and the service itself', async () => {
    const op = await createOperator(h.service.svc, SYSTEM_ACTOR, { name: 'Ion (admin)', role: 'admin' });
    expect(await lastAudit(op.id)).toMatchObject({
      actor: 'system',
      role: 'admin',
      via: 'system',
      action: 'operator.create',
    });

    const p = await h.newPartner({ name: 'Acted SRL' });
    const api = await h.service.app.inject({
      method: 'PATCH',
      url: `/admin/partners/${p.id}`,
      headers: { authorization: `Bearer ${op.token}`, 'content-type': 'application/json' },
      payload: JSON.stringify({ margin_bp: 120 }),
    });
    expect(api.statusCode).toBe(200);
    expect(await lastAudit(p.id)).toMatchObject({
      actor: op.id,
      role: 'admin',
      via: 'api',
      action: 'partner.change',
    });

    const consolePost = await consoleFormPoster(h, op.token);
    expect((await consolePost(`/console/partners/${p.id}/disable`)).statusCode).toBe(303);
    expect(await lastAudit(p.id)).toMatchObject({
      actor: op.id,
      role: 'admin',
      via: 'console',
      action: 'partner.change',
    });

    const other = await h.newPartner({ name: 'Portal SRL' });
    const owner = await portalUser(h, other.id, 'owner', 'ana@portal.example');
    await portalPost(h, '/portal/developers/webhook', owner.cookie, {
      webhook_url: 'https://hooks.portal.example/polita',
    });
    expect(await lastAudit(other.id)).toMatchObject({
      actor: `portal:${other.id}:ana@portal.example`,
      role: 'owner',
      via: 'portal',
      action: 'partner.change',
    });
  });
});

describe('operator roles', () => {
  it('refuses a support operator every change but re-sending webhooks, in the words it always had', async () => {
    const support = await createOperator(h.service.svc, SYSTEM_ACTOR, { name: 'Ana', role: 'support' });
    const p = await h.newPartner({ name: 'Supported SRL' });
    const order = await paidRcaOrder(h, p, TODAY);
    await h.waitForStatus(order, 'completed', { creds: p });
    for (const write of Object.keys(OPERATOR_WRITES) as OperatorWrite[]) {
      const [method, route] = write.split(' ') as [string, string];
      const path = route
        .replace(':userId', 'usr_none')
        .replace(':id', route.startsWith('/admin/orders') ? order : p.id);
      const res = await inject(support.token, method, path);
      if (OPERATOR_WRITES[write].includes('support')) {
        // Let through: the route answers as it does for an operator (no webhook URL is said in a
        // 200 or a 4xx of its own), never the role's 403 and never a failure.
        expect(res.statusCode, write).not.toBe(403);
        expect(res.statusCode, write).toBeLessThan(500);
      } else {
        const why = `The support role cannot ${method} ${path}: it reads, and re-sends webhooks`;
        expect({ write, status: res.statusCode, message: res.json<{ message: string }>().message }).toEqual({
          write,
          status: 403,
          message: why,
        });
      }
    }
    const consolePost = await consoleFormPoster(h, support.token);
    const refused = await consolePost(`/console/partners/${p.id}/disable`);
    expect(refused.statusCode).toBe(403);
    expect(refused.body).toContain(
      'The support role cannot disable partners: it reads, and re-sends webhooks.',
    );
    const resent = await consolePost(`/console/orders/${order}/resend`);
    expect(resent.statusCode).toBe(303);
    expect(await lastAudit(order)).toMatchObject({ actor: support.id, role: 'support', via: 'console' });
  });

  it('has a row for every change the operator API offers', async () => {
    const doc = (await h.service.app.inject({ method: 'GET', url: '/openapi.json' })).json<{
      paths: Record<string, Record<string, unknown>>;
    }>();
    const changes = Object.entries(doc.paths)
      .filter(([path]) => path.startsWith('/admin/'))
      .flatMap(([path, ops]) =>
        Object.keys(ops)
          .filter((m) => m !== 'get' && m !== 'head')
          .map((m) => `${m.toUpperCase()} ${path.replace(/\{(\w+)\}/g, ':$1')}`),
      );
    expect(changes.length).toBeGreaterThan(5);
    expect(changes.filter((c) => !(c in OPERATOR_WRITES))).toEqual([]);
  });
});

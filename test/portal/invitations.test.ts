import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createOperator } from '../../src/app/admin/operators.ts';
import { startHarness, TEST_SECRET_KEY, type Harness } from '../support/harness.ts';

/**
 * The operator invites a partner's portal users (decision 0034): through the API and the command
 * line, an invitation link shown once, only its hash stored, refusals that change nothing, and an
 * audit entry that holds no link.
 */
let h: Harness;
beforeAll(async () => {
  h = await startHarness();
});
afterAll(async () => {
  await h?.close();
});

interface Invited {
  id: string;
  email: string;
  role: string;
  invitation_url: string;
}

const invite = (partnerId: string, body: unknown) =>
  h.admin<Invited>('POST', `/admin/partners/${partnerId}/users`, body);

const userCount = async () =>
  Number(
    (await sql<{ n: number }>`select count(*)::int as n from portal_users`.execute(h.service.svc.db)).rows[0]!
      .n,
  );

describe('POST /admin/partners/:id/users', () => {
  it('answers 201 with the user and a link that only the answer holds', async () => {
    const p = await h.newPartner({ name: 'Agenția Nord' });
    const res = await invite(p.id, { email: 'Ana.Owner@Nord.example', role: 'owner' });
    expect(res.status).toBe(201);
    expect(res.body).toEqual({
      id: expect.stringMatching(/^usr_[0-9a-f]{16}$/),
      email: 'Ana.Owner@Nord.example',
      role: 'owner',
      invitation_url: expect.stringMatching(/^http:\/\/polita\.test\/portal\/invitations\/[\w-]{43}$/),
    });
    const token = res.body.invitation_url.split('/').pop()!;
    const stored = await sql<{ token_sha256: string; expires_at: Date }>`
      select token_sha256, expires_at from portal_invitations`.execute(h.service.svc.db);
    expect(JSON.stringify(stored.rows)).not.toContain(token);
    const row = stored.rows.find((r) => r.token_sha256.length === 64)!;
    // 72 h by the real clock.
    expect(Math.abs(row.expires_at.getTime() - (Date.now() + 72 * 3_600_000))).toBeLessThan(60_000);

    const audit = await h.admin<{ entries: Record<string, unknown>[] }>('GET', `/admin/audit?target=${p.id}`);
    const entry = audit.body.entries.find((e) => e.action === 'partner.invite_user')!;
    expect(entry).toMatchObject({ actor: 'admin-token', via: 'api', role: 'admin' });
    expect(entry.after).toMatchObject({
      user_id: res.body.id,
      email: 'Ana.Owner@Nord.example',
      role: 'owner',
    });
    expect(JSON.stringify(audit.body)).not.toContain(token);
  });

  it('refuses a bad address, an unknown role, an unknown partner and an address in use, changing nothing', async () => {
    const p = await h.newPartner();
    const q = await h.newPartner();
    expect((await invite(p.id, { email: 'taken@example.com', role: 'cashier' })).status).toBe(201);
    const before = await userCount();
    const cases: [string, unknown, number, string][] = [
      [
        p.id,
        { email: 'not an address', role: 'owner' },
        400,
        'email must be an address like name@example.com',
      ],
      [
        p.id,
        { email: 'x@example.com', role: 'boss' },
        400,
        'body/role must be one of: owner, developer, cashier, accountant',
      ],
      [p.id, { email: 'x@example.com' }, 400, "body must have required property 'role'"],
      [
        p.id,
        { email: 'x@example.com', role: 'owner', name: 'X' },
        400,
        'body/name is not a field of this request',
      ],
      ['nobody', { email: 'x@example.com', role: 'owner' }, 404, 'Partner not found'],
      // Unique across the service, whatever the case, whichever partner.
      [
        q.id,
        { email: 'TAKEN@example.com', role: 'owner' },
        409,
        'A portal user with the email TAKEN@example.com exists already',
      ],
    ];
    for (const [partner, body, status, message] of cases) {
      const res = await invite(partner, body);
      expect(res.status, JSON.stringify(body)).toBe(status);
      expect(res.body).toMatchObject({ message });
    }
    expect(await userCount()).toBe(before);
  });

  it('invites again an address that has not set its password: a new link and role, the old link void', async () => {
    const p = await h.newPartner();
    const first = await invite(p.id, { email: 'late@example.com', role: 'cashier' });
    const second = await invite(p.id, { email: 'late@example.com', role: 'accountant' });
    expect(second.status).toBe(201);
    expect(second.body).toMatchObject({ id: first.body.id, role: 'accountant' });
    expect(second.body.invitation_url).not.toBe(first.body.invitation_url);
    const open = await sql<{ n: number }>`select count(*)::int as n from portal_invitations
      where user_id = ${first.body.id} and used_at is null`.execute(h.service.svc.db);
    expect(open.rows[0]!.n).toBe(1);
  });

  it('is refused to a support operator (403)', async () => {
    const p = await h.newPartner();
    const { token } = await createOperator(h.service.svc, { name: 'Sam Support', role: 'support' });
    const res = await h.service.app.inject({
      method: 'POST',
      url: `/admin/partners/${p.id}/users`,
      headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
      payload: JSON.stringify({ email: 'x@example.com', role: 'owner' }),
    });
    expect(res.statusCode).toBe(403);
  });
});

describe('npm run admin -- partners invite', () => {
  it('prints the user and its link, and refuses what the API refuses with exit code 1', async () => {
    const p = await h.newPartner();
    const run = promisify(execFile);
    const env = {
      ...process.env,
      DATABASE_URL: h.databaseUrl,
      DATA_DIR: h.dataDir,
      SECRET_KEY: TEST_SECRET_KEY,
      SANDBOX: 'true',
      PUBLIC_BASE_URL: 'http://polita.test',
      LOG_LEVEL: 'warn',
    };
    const args = ['run', '--silent', 'admin', '--', 'partners', 'invite', p.id];
    const ok = await run('npm', [...args, '--email', 'cli@example.com', '--role', 'owner'], { env });
    expect(JSON.parse(ok.stdout)).toEqual({
      id: expect.stringMatching(/^usr_/),
      email: 'cli@example.com',
      role: 'owner',
      invitation_url: expect.stringMatching(/^http:\/\/polita\.test\/portal\/invitations\/[\w-]{43}$/),
    });
    const refused = await run('npm', [...args, '--email', 'cli2@example.com', '--role', 'boss'], {
      env,
    }).catch((e: { code: number; stderr: string }) => e);
    expect(refused).toMatchObject({ code: 1 });
    expect((refused as { stderr: string }).stderr).toContain(
      'role must be one of: owner, developer, cashier, accountant',
    );
    const audit = await h.admin<{ entries: Record<string, unknown>[] }>('GET', `/admin/audit?target=${p.id}`);
    expect(audit.body.entries[0]).toMatchObject({ action: 'partner.invite_user', via: 'cli' });
  });
});

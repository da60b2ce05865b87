import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { signedInConsole } from '../support/console.ts';
import type { Harness } from '../support/harness.ts';

/** The operator sets a partner's renewal notice (decision 0092) on its console page. */
let h: Harness;
let cookie: string;
beforeAll(async () => ({ h, cookie } = await signedInConsole()));
afterAll(() => h?.close());

async function save(id: string, fields: Record<string, string>) {
  const page = await h.service.app.inject({
    method: 'GET',
    url: `/console/partners/${id}`,
    headers: { cookie },
  });
  const csrf = /name="_csrf" value="([^"]+)"/.exec(page.body)![1]!;
  const cookies = [cookie, ...page.cookies.map((c) => `${c.name}=${c.value}`)].join('; ');
  return {
    page,
    res: await h.service.app.inject({
      method: 'POST',
      url: `/console/partners/${id}/webhook`,
      headers: {
        cookie: cookies,
        'content-type': 'application/x-www-form-urlencoded',
        origin: 'http://polita.test',
      },
      payload: new URLSearchParams({ _csrf: csrf, webhook_url: '', ...fields }).toString(),
    }),
  };
}

describe('the partner page’s renewal notice', () => {
  it('shows the days and saves a new number, refusing one out of range', async () => {
    const p = await h.newPartner({ name: 'Console renewals' });
    const { page, res } = await save(p.id, { renewal_notice_days: '60', events: ['expiring'].join() });
    expect(page.body).toMatch(/id="renewal_notice_days"[^>]*value="30"/);
    expect(res.statusCode).toBe(303);
    expect((await h.admin('GET', `/admin/partners/${p.id}`)).body).toMatchObject({
      renewal_notice_days: 60,
      webhook_events: ['completed', 'expiring'],
    });
    const refused = await save(p.id, { renewal_notice_days: '366' });
    expect(refused.res.statusCode).toBe(400);
    expect((await h.admin('GET', `/admin/partners/${p.id}`)).body).toMatchObject({ renewal_notice_days: 60 });
  });
});

import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { localDate } from '../../src/domain/time.ts';
import { startHarness, type Creds, type Harness } from '../support/harness.ts';
import { paidRcaOrder } from '../support/orders.ts';
import { FORM, form, get, portalUser, startReceiver, type Signed } from './support.ts';

/**
 * Who reaches what (decision 0037), for every portal route and method, every role and a visitor
 * without a session, with two partners: a page the role may not see is 403, another partner's order,
 * file or user is 404, and the table must name every route the portal serves.
 */
type Who = 'owner' | 'developer' | 'cashier' | 'accountant' | 'nobody';
const WHO: Who[] = ['owner', 'developer', 'cashier', 'accountant', 'nobody'];

interface Ctx {
  mine: string;
  theirs: string;
  theirUser: string;
  /** A fresh user of the signed-in partner, for an action that uses one up. */
  freshUser(): Promise<string>;
  receiverUrl: string;
}

interface Row {
  method: 'GET' | 'POST';
  /** The route as the server lists it. */
  route: string;
  url(ctx: Ctx): string | Promise<string>;
  fields?(ctx: Ctx): Record<string, string>;
  /** The status for owner, developer, cashier, accountant. */
  expect: [number, number, number, number];
  /** Without a session: sent to sign-in (303) for a GET, refused (403) for a POST, unless said here. */
  nobody?: number;
}

const everyone = (s: number): [number, number, number, number] => [s, s, s, s];
let n = 0;

const ROWS: Row[] = [
  { method: 'GET', route: '/portal', url: () => '/portal', expect: everyone(303) },
  { method: 'GET', route: '/portal/', url: () => '/portal/', expect: everyone(303) },
  { method: 'GET', route: '/portal/sell', url: () => '/portal/sell', expect: [200, 403, 200, 403] },
  {
    method: 'POST',
    route: '/portal/sell/offers',
    url: () => '/portal/sell/offers',
    fields: () => ({
      product: 'rca',
      'f.vehicle': '100000001',
      'f.duration': '365',
      'f.idnx': '2003000000016',
    }),
    expect: [200, 403, 200, 403],
  },
  {
    method: 'POST',
    route: '/portal/sell/details',
    url: () => '/portal/sell/details',
    // A sale token of no session: refused, nothing shown of any offer.
    fields: () => ({ sale: 'e30.bm90LWEtbWFj' }),
    expect: [400, 403, 400, 403],
  },
  {
    method: 'POST',
    route: '/portal/sell/create-order',
    url: () => '/portal/sell/create-order',
    // A form without its sale: refused, nothing created.
    fields: () => ({ sale: '', 'c.phone': '069123456' }),
    expect: [400, 403, 400, 403],
  },
  {
    method: 'GET',
    route: '/portal/sell/orders/:id',
    url: (c) => `/portal/sell/orders/${c.mine}`,
    expect: [200, 403, 200, 403],
  },
  {
    method: 'GET',
    route: '/portal/sell/orders/:id',
    url: (c) => `/portal/sell/orders/${c.theirs}`,
    expect: [404, 403, 404, 403],
  },
  {
    method: 'POST',
    route: '/portal/sell/orders/:id/wallet',
    url: (c) => `/portal/sell/orders/${c.theirs}/wallet`,
    expect: [404, 403, 404, 403],
  },
  {
    method: 'POST',
    route: '/portal/sell/orders/:id/payment',
    url: (c) => `/portal/sell/orders/${c.theirs}/payment`,
    fields: () => ({ receipt_id: 'R-1', transaction_id: 'T-1' }),
    expect: [404, 403, 404, 403],
  },
  { method: 'GET', route: '/portal/orders', url: () => '/portal/orders', expect: everyone(200) },
  {
    method: 'GET',
    route: '/portal/orders/:id',
    url: (c) => `/portal/orders/${c.mine}`,
    expect: everyone(200),
  },
  {
    method: 'GET',
    route: '/portal/orders/:id',
    url: (c) => `/portal/orders/${c.theirs}`,
    expect: everyone(404),
  },
  {
    method: 'GET',
    route: '/portal/orders/:id/policy/:idx',
    url: (c) => `/portal/orders/${c.mine}/policy/0`,
    expect: everyone(200),
  },
  {
    method: 'GET',
    route: '/portal/orders/:id/policy/:idx',
    url: (c) => `/portal/orders/${c.theirs}/policy/0`,
    expect: everyone(404),
  },
  {
    method: 'POST',
    route: '/portal/orders/:id/resend',
    url: (c) => `/portal/orders/${c.mine}/resend`,
    expect: [303, 303, 403, 403],
  },
  {
    method: 'POST',
    route: '/portal/orders/:id/resend',
    url: (c) => `/portal/orders/${c.theirs}/resend`,
    expect: [404, 404, 403, 403],
  },
  // Cancel policy and Correct preview only here (decision 0088): nothing changes.
  {
    method: 'POST',
    route: '/portal/orders/:id/cancel',
    url: (c) => `/portal/orders/${c.mine}/cancel`,
    expect: [200, 403, 200, 403],
  },
  {
    method: 'POST',
    route: '/portal/orders/:id/cancel',
    url: (c) => `/portal/orders/${c.theirs}/cancel`,
    expect: [404, 403, 404, 403],
  },
  {
    method: 'POST',
    route: '/portal/orders/:id/correct',
    url: (c) => `/portal/orders/${c.mine}/correct`,
    fields: () => ({ plate_number: 'CHY 998' }),
    expect: [200, 403, 200, 403],
  },
  {
    method: 'POST',
    route: '/portal/orders/:id/correct',
    url: (c) => `/portal/orders/${c.theirs}/correct`,
    fields: () => ({ plate_number: 'CHY 998' }),
    expect: [404, 403, 404, 403],
  },
  {
    method: 'POST',
    route: '/portal/language',
    url: () => '/portal/language',
    fields: () => ({ language: 'en', back: '/portal/orders' }),
    expect: everyone(303),
  },
  {
    method: 'POST',
    route: '/portal/developers/renewals',
    url: () => '/portal/developers/renewals',
    fields: () => ({ renewal_notice_days: '30' }),
    expect: [303, 303, 403, 403],
  },
  {
    method: 'POST',
    route: '/portal/developers/events/resend',
    url: () => '/portal/developers/events/resend',
    // An event of no order of this partner: refused where the role may ask at all.
    fields: () => ({ id: 'evt_not_one_of_ours' }),
    expect: [404, 404, 403, 403],
  },
  { method: 'GET', route: '/portal/wallet', url: () => '/portal/wallet', expect: [200, 403, 403, 200] },
  {
    method: 'GET',
    route: '/portal/wallet/statement.csv',
    url: () => '/portal/wallet/statement.csv',
    expect: [200, 403, 403, 200],
  },
  {
    method: 'GET',
    route: '/portal/developers',
    url: () => '/portal/developers',
    expect: [200, 200, 403, 403],
  },
  {
    method: 'POST',
    route: '/portal/developers/secrets',
    url: () => '/portal/developers/secrets',
    expect: [201, 201, 403, 403],
  },
  {
    method: 'POST',
    route: '/portal/developers/secrets/retire',
    url: () => '/portal/developers/secrets/retire',
    expect: [303, 303, 403, 403],
  },
  {
    method: 'POST',
    route: '/portal/developers/signatures',
    url: () => '/portal/developers/signatures',
    fields: () => ({ require: 'false' }),
    expect: [303, 303, 403, 403],
  },
  {
    method: 'POST',
    route: '/portal/developers/renewals',
    url: () => '/portal/developers/renewals',
    fields: () => ({ renewal_notice_days: '45' }),
    expect: [303, 303, 403, 403],
  },
  // Another partner's or an unknown event is not found; nothing is sent.
  {
    method: 'POST',
    route: '/portal/developers/events/resend',
    url: () => '/portal/developers/events/resend',
    fields: () => ({ id: 'evt_0000000000000000' }),
    expect: [404, 404, 403, 403],
  },
  {
    method: 'POST',
    route: '/portal/developers/webhook',
    url: () => '/portal/developers/webhook',
    fields: (c) => ({ webhook_url: c.receiverUrl }),
    expect: [303, 303, 403, 403],
  },
  {
    method: 'POST',
    route: '/portal/developers/webhook-test',
    url: () => '/portal/developers/webhook-test',
    expect: [200, 200, 403, 403],
  },
  { method: 'GET', route: '/portal/team', url: () => '/portal/team', expect: [200, 403, 403, 403] },
  {
    method: 'POST',
    route: '/portal/team/users',
    url: () => '/portal/team/users',
    fields: () => ({ email: `new${++n}@access.example`, role: 'cashier' }),
    expect: [201, 403, 403, 403],
  },
  {
    method: 'POST',
    route: '/portal/team/users/:id/password-link',
    url: async (c) => `/portal/team/users/${await c.freshUser()}/password-link`,
    expect: [201, 403, 403, 403],
  },
  { method: 'GET', route: '/portal/account', url: () => '/portal/account', expect: everyone(200) },
  {
    method: 'POST',
    route: '/portal/account/password',
    url: () => '/portal/account/password',
    // A wrong current password: refused, nothing changed.
    fields: () => ({ current: 'not the password at all', password: 'river-blue-cactus-9 lamp' }),
    expect: everyone(400),
  },
  {
    method: 'POST',
    route: '/portal/team/users/:id/disable',
    url: async (c) => `/portal/team/users/${await c.freshUser()}/disable`,
    expect: [303, 403, 403, 403],
  },
  {
    method: 'POST',
    route: '/portal/team/users/:id/disable',
    url: (c) => `/portal/team/users/${c.theirUser}/disable`,
    expect: [404, 403, 403, 403],
  },
  {
    method: 'GET',
    route: '/portal/sign-in',
    url: () => '/portal/sign-in',
    expect: everyone(303),
    nobody: 200,
  },
];
/** Open to everyone, with or without a session: their own tests say what they do. */
const PUBLIC = [
  'GET /portal/static/portal.css',
  'GET /portal/static/console.css',
  'GET /portal/static/htmx.min.js',
  'POST /portal/sign-in',
  'GET /portal/invitations/:token',
  'POST /portal/invitations/:token',
];
/** Ends the session: the table's last row, after every other. */
const SIGN_OUT = 'POST /portal/sign-out';

let h: Harness;
let receiver: Awaited<ReturnType<typeof startReceiver>>;
let a: Creds;
const users = {} as Record<Who, Signed | undefined>;
let ctx: Ctx;
beforeAll(async () => {
  receiver = await startReceiver();
  h = await startHarness();
  a = await h.newPartner({ name: 'Agenția Nord', webhook_url: receiver.url });
  const b = await h.newPartner({ name: 'Agenția Sud' });
  for (const role of ['owner', 'developer', 'cashier', 'accountant'] as const)
    users[role] = await portalUser(h, a.id, role);
  const today = localDate(await h.service.svc.clock.now());
  const [mine, theirs] = [await paidRcaOrder(h, a, today), await paidRcaOrder(h, b, today)];
  await h.waitForStatus(mine, 'completed', { creds: a });
  await h.waitForStatus(theirs, 'completed', { creds: b });
  ctx = {
    mine,
    theirs,
    theirUser: (await portalUser(h, b.id, 'owner')).userId,
    freshUser: async () => (await portalUser(h, a.id, 'cashier')).userId,
    receiverUrl: receiver.url,
  };
});
afterAll(async () => {
  await h?.close();
  await receiver?.close();
});

async function request(who: Who, method: 'GET' | 'POST', url: string, fields: Record<string, string> = {}) {
  const cookie = users[who]?.cookie ?? '';
  if (method === 'GET') return get(h, url, cookie);
  // The session's own CSRF token, from a page every role opens.
  const page = cookie ? await get(h, '/portal/orders', cookie) : undefined;
  const _csrf = page ? /name="_csrf" value="([^"]+)"/.exec(page.body)![1]! : '';
  return h.service.app.inject({
    method,
    url,
    headers: { ...FORM, ...(cookie ? { cookie } : {}) },
    payload: form({ ...fields, _csrf }),
  });
}

describe('every portal route, method and role', () => {
  it('names every route the portal serves', () => {
    const served = new Set<string>();
    const stack: string[] = [];
    for (const line of h.service.app.printRoutes({ commonPrefix: false }).split('\n')) {
      const m = /^((?:│ {3}| {4})*)(?:├── |└── )(.*?)(?: \(([^)]*)\))?$/.exec(line);
      if (!m) continue;
      const depth = m[1]!.length / 4;
      stack.length = depth;
      stack[depth] = m[2]!;
      const path = stack.join('');
      if (!path.startsWith('/portal') || !m[3]) continue;
      for (const method of m[3].split(', ')) if (method !== 'HEAD') served.add(`${method} ${path}`);
    }
    const named = new Set([...ROWS.map((r) => `${r.method} ${r.route}`), ...PUBLIC, SIGN_OUT]);
    expect([...served].sort()).toEqual([...named].sort());
  });

  for (const row of ROWS) {
    it(`${row.method} ${row.route}`, async () => {
      const got: Record<string, number> = {};
      const want: Record<string, number> = {};
      for (const [i, who] of WHO.entries()) {
        const res = await request(who, row.method, await row.url(ctx), row.fields?.(ctx));
        got[who] = res.statusCode;
        want[who] = who === 'nobody' ? (row.nobody ?? (row.method === 'GET' ? 303 : 403)) : row.expect[i]!;
      }
      expect(got).toEqual(want);
    });
  }

  it(SIGN_OUT, async () => {
    for (const who of WHO) {
      const res = await request(who, 'POST', '/portal/sign-out');
      expect(res.statusCode, who).toBe(who === 'nobody' ? 403 : 303);
      if (who !== 'nobody') expect((await get(h, '/portal/orders', users[who]!.cookie)).statusCode).toBe(303);
    }
  });
});

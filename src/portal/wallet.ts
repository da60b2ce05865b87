import { Type } from '@sinclair/typebox';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { exportStatement } from '../app/portal/export-statement.ts';
import { readWallet } from '../app/portal/read-wallet.ts';
import type { Services } from '../app/services.ts';
import type { App } from '../http/typed.ts';
import { say } from './reasons.ts';
import { fromHtmx, given, queryOf, tOf, unlessRefused, userOf, type Render } from './web.ts';

const Text = (max = 200) => Type.Optional(Type.String({ maxLength: max }));
const PAGE = 25;

/**
 * The wallet page with a refusal instead of the balances: a role without the wallet (the portal's
 * area check, src/portal/areas.ts) sees why, and no form it may not use.
 */
export const walletRefused =
  (render: Render) =>
  (
    req: FastifyRequest,
    reply: FastifyReply,
    r: { message: string; status: number },
    period = { from: '', to: '' },
  ) =>
    render(
      req,
      reply,
      'wallet',
      {
        title: tOf(req)('wallet.title'),
        current: 'wallet',
        period,
        wallet: null,
        error: say(tOf(req), r.message),
        forbidden: r.status === 403,
      },
      r.status,
    );

/** Wallet: the balances, the ledger of a period with paging, and the period's statement as CSV. */
export async function walletPages(app: App, svc: Services, render: Render): Promise<void> {
  const refused = walletRefused(render);
  app.get(
    '/wallet',
    { schema: { querystring: Type.Object({ from: Text(10), to: Text(10), cursor: Text(20) }) } },
    async (req, reply) => {
      const user = userOf(req);
      const asked = { from: given(req.query.from), to: given(req.query.to) };
      const cursor = given(req.query.cursor);
      if (fromHtmx(req)) reply.header('hx-push-url', `/portal/wallet${queryOf({ ...asked, cursor })}`);
      const base = { title: tOf(req)('wallet.title'), current: 'wallet' };
      return unlessRefused(
        async () => {
          const { period, wallet } = await readWallet(svc, user, {
            ...(asked.from ? { from: asked.from } : {}),
            ...(asked.to ? { to: asked.to } : {}),
            ...(cursor ? { cursor } : {}),
            limit: PAGE,
          });
          return render(req, reply, 'wallet', {
            ...base,
            period,
            wallet,
            csv: `/portal/wallet/statement.csv${queryOf(period)}`,
            firstPage: cursor ? `/portal/wallet${queryOf(period)}` : null,
            next: wallet?.next_cursor
              ? `/portal/wallet${queryOf({ ...period, cursor: wallet.next_cursor })}`
              : null,
          });
        },
        (r) => refused(req, reply, r, { from: asked.from ?? '', to: asked.to ?? '' }),
      );
    },
  );

  app.get(
    '/wallet/statement.csv',
    { schema: { querystring: Type.Object({ from: Text(10), to: Text(10) }) } },
    async (req, reply) => {
      const asked = { from: given(req.query.from), to: given(req.query.to) };
      const { from, to, csv } = await exportStatement(svc, userOf(req), {
        ...(asked.from ? { from: asked.from } : {}),
        ...(asked.to ? { to: asked.to } : {}),
      });
      const partner = userOf(req).partnerId.replace(/[^a-z0-9_-]/gi, '');
      return reply
        .type('text/csv; charset=utf-8')
        .header('content-disposition', `attachment; filename="statement-${partner}-${from}-${to}.csv"`)
        .send(csv);
    },
  );
}

import { Type } from '@sinclair/typebox';
import type { FastifyRequest } from 'fastify';
import type { OperatorActor } from '../app/actor.ts';
import { changeSettings, readSettings } from '../app/admin/settings.ts';
import { refundOrder } from '../app/refund-order.ts';
import type { Services } from '../app/services.ts';
import { statementCsv, walletStatement } from '../app/wallet-statement.ts';
import { Id, Refund, Settings, Statement, StatementResponse } from './admin-schemas.ts';
import { OperatorBody } from './schemas.ts';
import { errorResponses, exactly, Nullable, type App } from './typed.ts';

/**
 * Operator calls around the wallet: the spending switch, refunds, statements. Registered from
 * adminRoutes, inside its scope, so the admin token guards them; `by` names a request's operator.
 */
export async function adminWalletRoutes(
  app: App,
  svc: Services,
  by: (req: FastifyRequest) => OperatorActor,
): Promise<void> {
  const tags = ['operator'];
  const settings = { 200: Settings, ...errorResponses };
  // null only if the refund just committed could not be read back.
  const RefundAnswer = Nullable(Refund, { description: 'The refund' });
  const Day = Type.String({ pattern: '^\\d{4}-\\d{2}-\\d{2}$' });

  app.get(
    '/admin/settings',
    { schema: { tags, summary: 'Read the settings', operationId: 'getSettings', response: settings } },
    async () => exactly(Settings, await readSettings(svc)),
  );
  app.put(
    '/admin/settings',
    {
      schema: {
        tags,
        summary: 'Switch balance spending on or off',
        operationId: 'changeSettings',
        body: OperatorBody({ balance_spending_enabled: Type.Boolean() }),
        response: settings,
      },
    },
    async (req) => exactly(Settings, await changeSettings(svc, by(req), req.body)),
  );

  app.post(
    '/admin/orders/:id/refund',
    {
      schema: {
        tags,
        summary: 'Refund a failed or completed order',
        operationId: 'refundOrder',
        params: Id,
        body: OperatorBody({ reason: Type.String({ minLength: 1, maxLength: 500 }) }),
        response: { 200: RefundAnswer, ...errorResponses },
      },
    },
    async (req) =>
      exactly(
        RefundAnswer,
        await refundOrder(svc, by(req), req.params.id, { reason: req.body.reason, actor: 'operator' }),
      ),
  );

  app.get(
    '/admin/partners/:id/wallet/statement',
    {
      schema: {
        tags,
        summary: 'A partner wallet statement (JSON or CSV)',
        operationId: 'getWalletStatement',
        params: Id,
        querystring: Type.Object({
          from: Day,
          to: Day,
          format: Type.Optional(Type.Union([Type.Literal('json'), Type.Literal('csv')])),
        }),
        response: { 200: StatementResponse, ...errorResponses },
      },
    },
    async (req, reply) => {
      const q = req.query;
      const partnerId = req.params.id;
      const statement = exactly(Statement, await walletStatement(svc, { partnerId, from: q.from, to: q.to }));
      if (q.format !== 'csv') return statement;
      return reply
        .type('text/csv; charset=utf-8')
        .header('content-disposition', `attachment; filename="statement-${partnerId}-${q.from}-${q.to}.csv"`)
        .send(statementCsv(statement));
    },
  );
}

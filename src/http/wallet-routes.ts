import { Type } from '@sinclair/typebox';
import { getBalance } from '../app/get-balance.ts';
import { payOrderFromWallet } from '../app/pay-order-from-wallet.ts';
import type { Services } from '../app/services.ts';
import type { IdempotentRoute } from './idempotency.ts';
import { Order, partnerDoc as doc } from './schemas.ts';
import { errorResponses as errors, type App } from './typed.ts';
import { refuseWebhookFields } from './webhook-fields.ts';

export const Balance = Type.Object(
  {
    balance: Type.Number({ description: 'Spendable total: online + promo, MDL' }),
    currency: Type.Literal('MDL'),
    wallets: Type.Object({
      online: Type.Number({ description: 'Wire-transfer top-ups land here' }),
      insurance: Type.Number({ description: 'Commissions owed to the partner; never pays an order' }),
      promo: Type.Number(),
    }),
    updated_at: Type.String({ description: 'ISO-8601 with offset: when the balance was computed' }),
  },
  { description: 'Wallet balance' },
);

export const walletSchemas = {
  getBalance: { body: Type.Object({}), response: { 200: Balance, ...errors } },
  payOrderFromBalance: {
    body: Type.Object({ id: Type.String({ minLength: 1, maxLength: 64 }) }),
    response: { 200: Type.Ref(Order), ...errors },
  },
};

/**
 * The partner's wallet endpoints. Registered from partnerRoutes, inside its scope, so the
 * signature check runs before these handlers exactly as for the order endpoints.
 */
export async function walletRoutes(app: App, svc: Services, idempotent: IdempotentRoute): Promise<void> {
  app.post(
    '/v1/get-balance',
    {
      schema: { ...doc('Read the prepaid wallet balance', 'getBalance'), ...walletSchemas.getBalance },
      preValidation: refuseWebhookFields,
    },
    async (req) => getBalance(svc, req.partner),
  );
  app.post(
    '/v1/pay-order-from-balance',
    {
      schema: {
        ...doc('Pay a draft order from the prepaid wallet', 'payOrderFromBalance'),
        ...walletSchemas.payOrderFromBalance,
      },
      ...idempotent,
      preValidation: refuseWebhookFields,
    },
    async (req) => payOrderFromWallet(svc, req.partner, req.body.id),
  );
}

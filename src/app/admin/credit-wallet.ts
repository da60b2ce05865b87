import { badRequest, notFound } from '../../domain/errors.ts';
import { book, lockWallet } from '../../db/repos/wallets.ts';
import type { SubWallet } from '../../db/schema.ts';
import type { Services } from '../services.ts';
import { balanceView } from '../wallet-view.ts';

/**
 * An operator credit (a wire transfer lands in `online`). The reference makes it idempotent:
 * crediting again with the same reference changes nothing and answers the current balance.
 */
export async function creditWallet(
  svc: Services,
  input: { partnerId: string; wallet: SubWallet; amountBani: number; reference: string; actor: string },
) {
  if (!Number.isSafeInteger(input.amountBani) || input.amountBani <= 0) {
    throw badRequest('amount must be greater than 0 with at most 2 decimals');
  }
  const now = await svc.clock.now();
  return svc.db.transaction().execute(async (trx) => {
    const wallet = await lockWallet(trx, input.partnerId);
    if (!wallet) throw notFound(`Partner ${input.partnerId} has no wallet`);
    const after = await book(trx, wallet, {
      partnerId: input.partnerId,
      wallet: input.wallet,
      amount: input.amountBani,
      kind: 'credit',
      orderId: null,
      reference: input.reference,
      actor: input.actor,
      at: new Date(now),
    });
    return balanceView(after ?? wallet, now);
  });
}

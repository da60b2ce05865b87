import { badRequest, notFound } from '../../domain/errors.ts';
import { partnerExists } from '../../db/repos/partners.ts';
import { book, creditBooked, lockWallet } from '../../db/repos/wallets.ts';
import { baniToMdl, formatAmount, mdlToBani } from '../../domain/money.ts';
import { MAX_CREDIT_BANI, MAX_SUB_WALLET_BANI } from '../../domain/wallet.ts';
import type { SubWallet } from '../../db/schema.ts';
import type { Services } from '../services.ts';
import { balanceView } from '../wallet-view.ts';
import { audit, type Actor } from '../actor.ts';

/**
 * A credit's amount as the operator API takes it, JSON MDL, in bani: greater than 0, at most 2
 * decimals, at most 10 000 000.00 (400 otherwise). The console and the command line read typed text
 * to bani themselves (`mdlTextToBani`), never through a float.
 */
export function creditAmountBani(amount: number): number {
  // Past the limit the limit is the reason, whatever its decimals.
  if (amount > MAX_CREDIT_BANI / 100) throw badRequest(OVER_CREDIT);
  const amountBani = mdlToBani(amount);
  if (amountBani === null || amountBani <= 0) {
    throw badRequest('amount must be greater than 0 with at most 2 decimals');
  }
  return amountBani;
}

/** The operator's credit to a partner that exists ("Partner not found" otherwise): {@link creditWallet}. */
export async function creditPartnerWallet(
  svc: Services,
  actor: Actor,
  input: { partnerId: string; wallet: SubWallet; amountBani: number; reference: string; actor: string },
) {
  if (!(await partnerExists(svc.db, input.partnerId))) throw notFound('Partner not found');
  return creditWallet(svc, actor, input);
}

const OVER_CREDIT = `amount must be at most ${formatAmount(MAX_CREDIT_BANI, 'MDL')} in one credit`;

/**
 * An operator credit (a wire transfer lands in `online`). The reference makes it idempotent:
 * crediting again with the same reference changes nothing and answers the current balance. A
 * credit is at most 10 000 000.00 MDL, and one that would take the sub-wallet past
 * 1 000 000 000.00 MDL is refused, changing nothing (decision 0048): balances stay exact integers.
 */
export async function creditWallet(
  svc: Services,
  actor: Actor,
  input: { partnerId: string; wallet: SubWallet; amountBani: number; reference: string; actor: string },
) {
  if (!Number.isSafeInteger(input.amountBani) || input.amountBani <= 0) {
    throw badRequest('amount must be greater than 0 with at most 2 decimals');
  }
  if (input.amountBani > MAX_CREDIT_BANI) throw badRequest(OVER_CREDIT);
  const now = await svc.clock.now();
  return svc.db.transaction().execute(async (trx) => {
    const wallet = await lockWallet(trx, input.partnerId);
    if (!wallet) throw notFound(`Partner ${input.partnerId} has no wallet`);
    if (wallet[input.wallet] + input.amountBani > MAX_SUB_WALLET_BANI) {
      // A repeat of a credit already booked is answered as every repeat is, full wallet or not.
      if (await creditBooked(trx, input.partnerId, input.reference)) return balanceView(wallet, now);
      throw badRequest(
        `This credit would take the ${input.wallet} wallet past ${formatAmount(MAX_SUB_WALLET_BANI, 'MDL')}, the most a sub-wallet holds: nothing was credited`,
      );
    }
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
    // A repeated reference books nothing, and is no action to record.
    if (after) {
      await audit(trx, actor, {
        action: 'wallet.credit',
        target: input.partnerId,
        before: { [input.wallet]: baniToMdl(wallet[input.wallet]) },
        after: { [input.wallet]: baniToMdl(after[input.wallet]), reference: input.reference },
        at: new Date(now),
      });
    }
    return balanceView(after ?? wallet, now);
  });
}

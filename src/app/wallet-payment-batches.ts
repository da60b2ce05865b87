import type { Logger } from 'pino';
import type { Db } from '../db/database.ts';
import {
  payDraftFromWallet,
  payDraftsFromWalletInTurn,
  type DraftToPay,
  type WalletPaymentOutcome,
  type WalletPaymentTerms,
} from '../db/repos/wallet-payments.ts';
import type { Services } from './services.ts';

/**
 * A busy partner's wallet payments booked together (decision 0026, kept by 0103 on a same-run A/B
 * of the whole route). Every payment of a partner waits on its wallet row, so one round trip and one
 * commit (one WAL flush) a payment bound how fast one wallet can pay. Here, in this process, the
 * payments of a partner that arrive while a statement of that partner runs wait in memory (rather
 * than as database sessions queued on the row lock, which burned more server CPU than the payments)
 * and then go together, at most 50, as one statement that pays them in their order of arrival
 * (payDraftsFromWalletInTurn). A payment alone keeps the single statement (payDraftFromWallet),
 * which costs the server less. Across instances, the row lock alone orders the payments.
 *
 * The answers are those of the same payments made one at a time: test/wallet/equivalence.test.ts.
 */
export function payInPartnerBatch(
  svc: Services,
  terms: WalletPaymentTerms,
  draft: DraftToPay,
): Promise<WalletPaymentOutcome> {
  let batches = batchesOf.get(svc);
  if (!batches) {
    batches = new BatchesPerKey((payments) => payTogether(svc.db, payments, svc.log));
    batchesOf.set(svc, batches);
  }
  return batches.submit(terms.partnerId, { terms, draft });
}

/** One payment waiting for its partner's next statement. */
export interface WaitingPayment {
  terms: WalletPaymentTerms;
  draft: DraftToPay;
}

/** Per Services: their database, and their partners' waiting payments. */
const batchesOf = new WeakMap<Services, BatchesPerKey<WaitingPayment, WalletPaymentOutcome>>();

/**
 * Payments of one partner that waited together, paid in as few statements as keep their answers:
 * one for those paid by the same terms, which is all of them but at the instant a product's
 * payability window opens or closes; and an order named again goes to a later statement, which
 * sees what the earlier one did (within one statement its second payment would be refused as paid
 * even when the first found the balance short). A payment refused or short of money changes
 * nothing and the others go on. If a statement of several fails, it changed nothing, and each of
 * its payments runs again alone, so that whatever failed it fails only its own; that is logged,
 * since the statement of several should not fail where the single one does not.
 */
export async function payTogether(
  db: Db,
  payments: readonly WaitingPayment[],
  log?: Pick<Logger, 'warn'>,
): Promise<Settled<WalletPaymentOutcome>[]> {
  const results: Settled<WalletPaymentOutcome>[] = [];
  for (const statement of statementsFor(payments)) {
    const { terms } = payments[statement[0]!]!;
    const drafts = statement.map((i) => payments[i]!.draft);
    if (drafts.length === 1) {
      results[statement[0]!] = await settled(payDraftFromWallet(db, terms, drafts[0]!));
      continue;
    }
    const paid = await settled(payDraftsFromWalletInTurn(db, terms, drafts));
    if (paid.ok) {
      statement.forEach((i, k) => (results[i] = { ok: true, value: paid.value[k]! }));
      continue;
    }
    log?.warn(
      { err: paid.error, partner: terms.partnerId, payments: drafts.length },
      'a batch of wallet payments failed; each runs again alone',
    );
    for (const i of statement) results[i] = await settled(payDraftFromWallet(db, terms, payments[i]!.draft));
  }
  return results;
}

/** The payments (by index) of each statement, in the order the statements run. */
function statementsFor(payments: readonly WaitingPayment[]): number[][] {
  const statements: { terms: WalletPaymentTerms; orders: Set<string>; payments: number[] }[] = [];
  payments.forEach((p, i) => {
    const joins = statements.find((s) => sameTerms(s.terms, p.terms) && !s.orders.has(p.draft.orderId));
    if (joins) {
      joins.payments.push(i);
      joins.orders.add(p.draft.orderId);
    } else statements.push({ terms: p.terms, orders: new Set([p.draft.orderId]), payments: [i] });
  });
  return statements.map((s) => s.payments);
}

/** Whether two payments are judged by the same terms, and so can share a statement. */
function sameTerms(a: WalletPaymentTerms, b: WalletPaymentTerms): boolean {
  return (
    a.partnerId === b.partnerId &&
    a.spendingKey === b.spendingKey &&
    a.reason === b.reason &&
    a.actor === b.actor &&
    a.eligible.length === b.eligible.length &&
    a.eligible.every((product, i) => b.eligible[i] === product) &&
    a.windows.size === b.windows.size &&
    [...a.windows].every(([product, w]) => {
      const other = b.windows.get(product);
      return other !== undefined && other.from === w.from && other.until === w.until;
    })
  );
}

/** One job's result, or what failed it alone. */
export type Settled<R> = { ok: true; value: R } | { ok: false; error: unknown };

const settled = <R>(p: Promise<R>): Promise<Settled<R>> =>
  p.then(
    (value) => ({ ok: true, value }),
    (error: unknown) => ({ ok: false, error }),
  );

/**
 * Jobs run a batch at a time per key (a partner): the first of a quiet key runs at once and alone;
 * those that arrive while a batch runs wait here and then run together as the next batch, at most
 * `max` of them, in arrival order. Keys run alongside each other. `run` answers one result per job,
 * in order; if it throws, every job of the batch fails with it.
 */
export class BatchesPerKey<J, R> {
  readonly #waiting = new Map<string, Waiter<J, R>[]>();

  private readonly run: (jobs: J[]) => Promise<Settled<R>[]>;
  private readonly max: number;

  constructor(run: (jobs: J[]) => Promise<Settled<R>[]>, max = 50) {
    this.run = run;
    this.max = max;
  }

  submit(key: string, job: J): Promise<R> {
    return new Promise<R>((resolve, reject) => {
      const waiter = { job, resolve, reject };
      const waiting = this.#waiting.get(key);
      if (waiting) {
        waiting.push(waiter);
        return;
      }
      this.#waiting.set(key, []);
      void this.#drain(key, [waiter]);
    });
  }

  async #drain(key: string, first: Waiter<J, R>[]): Promise<void> {
    const waiting = this.#waiting.get(key)!;
    for (let batch = first; batch.length > 0; batch = waiting.splice(0, this.max)) {
      let results: Settled<R>[];
      try {
        results = await this.run(batch.map((w) => w.job));
      } catch (err) {
        results = batch.map(() => ({ ok: false, error: err }));
      }
      batch.forEach((w, i) => {
        const r = results[i] ?? { ok: false, error: new Error('a batch answered fewer results than jobs') };
        if (r.ok) w.resolve(r.value);
        else w.reject(r.error);
      });
    }
    this.#waiting.delete(key);
  }
}

interface Waiter<J, R> {
  job: J;
  resolve: (value: R) => void;
  reject: (err: unknown) => void;
}

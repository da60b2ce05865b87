import { setTimeout as sleep } from 'node:timers/promises';
import { conflict, DomainError, notFound, type ErrorCode } from '../../domain/errors.ts';
import { addDays } from '../../domain/time.ts';
import { baniToMdl } from '../../domain/money.ts';
import { walletEligible } from '../../domain/wallet.ts';
import { claimKey, releaseKey, storeAnswer } from '../../db/repos/idempotency.ts';
import { orderItems } from '../../db/repos/orders.ts';
import { findWallet } from '../../db/repos/wallets.ts';
import type { PartnerRow } from '../../db/schema.ts';
import { PRODUCT_MODULES, productModule, type ProductCode } from '../../products/registry.ts';
import type { Choice } from '../../products/types.ts';
import { audit } from '../actor.ts';
import { confirmOrder } from '../confirm-order.ts';
import { createOrder, priceOrder, type CreateOrderInput } from '../create-order.ts';
import { payOrderFromWallet } from '../pay-order-from-wallet.ts';
import { catalogueOf } from '../product-context.ts';
import { quote } from '../quote.ts';
import type { Services } from '../services.ts';
import { portalActor } from './actor.ts';
import { ownedOrder, readOrder } from './read-order.ts';
import type { PortalUser } from './roles.ts';

/**
 * The sales desk (docs/decisions/0060-sales-desk-forms-from-schemas.md, 0061-sales-desk-idempotency.md):
 * a cashier sells through the use cases of the partner API, as the partner: get-offers, create-order,
 * pay-order-from-balance and confirm-order, with their rules, reasons and wallet checks. Each action
 * that changes something is in the audit log under the user.
 */

/** The products in words, in the registry's order (every product of the registry has its line). */
const PRODUCT_NAMES: Record<ProductCode, string> = {
  rca: 'RCA: motor third-party liability (Moldova)',
  'vignette:md': 'Road vignette, Moldova (foreign vehicles)',
  'vignette:eu': 'Road vignette, European countries',
  'roadside-assistance-eu': 'Roadside assistance in Europe',
  'green-card': 'Green Card: motor insurance abroad',
  medical: 'Travel medical insurance',
  baggage: 'Baggage insurance',
  'road-tax': 'Road tax (Moldova)',
  'vignette:ro': 'Road vignette, Romania (rovinieta)',
};

export const SELL_PRODUCTS: readonly { code: ProductCode; name: string }[] = PRODUCT_MODULES.map((m) => ({
  code: m.product,
  name: PRODUCT_NAMES[m.product],
}));

/** The product module of a code the desk sells, or 404. */
export function sellModule(product: string) {
  const m = productModule(product);
  if (!m) throw notFound(`There is no product ${product}`);
  return m;
}

/** The lists a product's form picks catalogue values from (companies, countries, territories…). */
export function productChoices(svc: Services, product: string): Record<string, readonly Choice[]> {
  const m = sellModule(product);
  return m.choices?.(catalogueOf(svc, m)) ?? {};
}

async function partnerOf(svc: Services, user: PortalUser): Promise<PartnerRow> {
  const partner = await svc.partners.get(user.partnerId);
  if (!partner) throw notFound('Partner not found');
  return partner;
}

/** get-offers, as the user's partner. */
export async function sellQuote(
  svc: Services,
  user: PortalUser,
  body: { product: string } & Record<string, unknown>,
): Promise<object> {
  return quote(svc, await partnerOf(svc, user), body);
}

const RULE_REFUSALS: ReadonlySet<ErrorCode> = new Set(['bad_request', 'not_found', 'product_rule']);

/**
 * What the product's rules refuse in a form the desk's own checks already refused (decision 0098):
 * the step run as it would run, without changing anything (get-offers' quote; create-order's
 * pricing of each product, which stores nothing), so the clerk sees the rules' refusals beside the
 * form's in one answer. A request the form's checks refused may trip a rule on a missing value in a
 * way no refusal names: any failure but a refusal is not said.
 */
export async function sellRuleRefusals(
  svc: Services,
  user: PortalUser,
  step: { quote: { product: string } & Record<string, unknown> } | { order: CreateOrderInput },
): Promise<readonly string[]> {
  const partner = await partnerOf(svc, user);
  try {
    if ('quote' in step) await quote(svc, partner, step.quote);
    else await priceOrder(svc, partner, step.order);
  } catch (err) {
    // The rules' refusals only: get-offers answers them as 400 (or 404, an unknown vehicle),
    // create-order's pricing as product_rule; a provider's failure or anything else is not said.
    if (err instanceof DomainError && RULE_REFUSALS.has(err.code)) return err.reasons;
  }
  return [];
}

/**
 * create-order, once per form: the form's one-time token is the idempotency key of the partner's
 * writes (decision 0006's table), so a second submission of the same form (a double click, a
 * reload, a retry after a lost answer) leads to the order the first made and makes none. A
 * refusal lets the key go, so the corrected form can be sent again.
 */
export async function sellCreateOrder(
  svc: Services,
  user: PortalUser,
  token: string,
  input: CreateOrderInput,
): Promise<string> {
  const partner = await partnerOf(svc, user);
  let price: number | undefined;
  return once(
    svc,
    partner.id,
    `portal:create-order:${token}`,
    async () => {
      const order = await createOrder(svc, partner, input);
      price = order.price;
      return order.id;
    },
    async (id) =>
      auditSale(svc, user, 'order.create', id, { price, products: input.products.map((p) => p.product) }),
  );
}

/**
 * A sale's page: the order (readOrder's view), and whether the wallet is offered for it: only when
 * the partner has a wallet and every product of the order is wallet-eligible (the configuration
 * pay-order-from-balance reads). The other checks (the spending switch, the balance, the order's
 * state) are payOrderFromWallet's to answer, with its reason.
 */
export async function readSale(
  svc: Services,
  user: PortalUser,
  id: string,
  rights: { developers: boolean; sell: boolean },
) {
  const order = await readOrder(svc, user, id, rights);
  const hasWallet = !!(await findWallet(svc.db, user.partnerId));
  const eligible = walletEligible(
    order.products.map((p) => p.product),
    svc.catalogue.common.wallet_eligible_products,
  );
  return { order, walletOffered: hasWallet && eligible };
}

/** pay-order-from-balance from the desk (payOrderFromWallet), once per order however often the button is pressed. */
export async function sellPayOrderFromWallet(svc: Services, user: PortalUser, id: string): Promise<void> {
  const partner = await partnerOf(svc, user);
  await ownedOrder(svc, user, id);
  let paid: { status: string; price: number } | undefined;
  await once(
    svc,
    partner.id,
    `portal:pay-from-wallet:${id}`,
    async () => {
      paid = await payOrderFromWallet(svc, partner, id);
      return id;
    },
    async () =>
      auditSale(svc, user, 'order.pay_from_wallet', id, { status: paid!.status, price: paid!.price }),
  );
}

/**
 * confirm-order with a payment the cashier collected: its receipt and transaction ids, the order's
 * price, paid now. confirm-order answers a repeat of the same payment with the order as it is, so a
 * second press records nothing more.
 */
export async function sellRecordPayment(
  svc: Services,
  user: PortalUser,
  id: string,
  p: { receipt_id: string; transaction_id: string },
): Promise<void> {
  const partner = await partnerOf(svc, user);
  const order = await ownedOrder(svc, user, id);
  const now = await svc.clock.now();
  // In the payment's transaction, and only when this press paid the order.
  await confirmOrder(
    svc,
    partner,
    id,
    {
      receipt_id: p.receipt_id,
      transaction_id: p.transaction_id,
      paid_at: now,
      amount: baniToMdl(order.price),
    },
    (trx) =>
      audit(trx, portalActor(user), {
        action: 'order.record_payment',
        target: id,
        after: { status: 'paid', receipt_id: p.receipt_id, transaction_id: p.transaction_id },
        at: new Date(now),
      }),
  );
}

/** How long a second press waits for the first to answer before saying so. */
const WAIT_MS = 20_000;

/**
 * Runs `act` once for `key`: the first request claims the key and stores what `act` answered (an
 * order id); a request with the same key meanwhile waits for that answer, and one after it gets it
 * at once. A refusal (or any failure) lets the key go.
 */
async function once(
  svc: Services,
  partnerId: string,
  key: string,
  act: () => Promise<string>,
  /** After the answer is stored (its audit entry): a failure here cannot let the key go. */
  after: (answer: string) => Promise<void>,
): Promise<string> {
  const started = Date.now();
  for (;;) {
    const at = new Date(await svc.clock.now());
    const claim = await claimKey(svc.db, { partnerId, key, requestHash: 'portal', at });
    if (claim.state === 'answered') return claim.body;
    if (claim.state === 'claimed') {
      let answer: string;
      try {
        answer = await act();
      } catch (err) {
        await releaseKey(svc.db, { partnerId, key });
        throw err;
      }
      await storeAnswer(svc.db, { partnerId, key, status: 200, body: answer, at });
      await after(answer);
      return answer;
    }
    // The key was used for another request (the partner's own, through /v1): it is not this form's.
    if (claim.state === 'other-body') throw conflict('This form was already used: start again from Sell.');
    if (Date.now() - started > WAIT_MS) {
      throw conflict('This form is still being processed: open Orders in a moment to see its order.');
    }
    await sleep(100);
  }
}

/**
 * Sell again (decision 0092): what the desk's Sell opens with for a renewal of one of the partner's
 * orders: its first product and the request it was sold with, and the new cover's first day, the
 * day after the old one's last.
 */
export async function renewalOf(svc: Services, user: PortalUser, orderId: string) {
  const order = await ownedOrder(svc, user, orderId);
  const item = (await orderItems(svc.db, order.id))[0];
  if (!item) throw notFound('Order not found');
  const given = item.details.request;
  const request: Record<string, unknown> =
    given && typeof given === 'object' && !Array.isArray(given)
      ? Object.fromEntries(Object.entries(given))
      : {};
  const end = item.end_date ?? order.end_date;
  return { product: item.product, request, startDate: end ? addDays(end, 1) : undefined };
}

/** A desk step in the audit log: by the clerk, now, on the order it made or paid. */
async function auditSale(svc: Services, user: PortalUser, action: string, id: string, after: unknown) {
  await audit(svc.db, portalActor(user), { action, target: id, after, at: new Date(await svc.clock.now()) });
}

// From a quote to a policy PDF with @polita/client: quote RCA for the sandbox's test vehicle,
// create a draft from the cheapest offer, pay it from the wallet and wait for the policy.
// Run: node examples/quickstart.mjs
import { Polita } from '@polita/client';
import { credentials } from './sandbox.mjs';

const polita = new Polita(credentials());

const quote = { product: 'rca', vehicle: '100000001', duration: 365, idnx: '2003000000016' };
const { offers } = await polita.getOffers(quote);
const offer = offers.reduce((a, b) => (b.price < a.price ? b : a));
console.log(`offer:     ${offer.company}, ${offer.price} MDL, from ${offer.min_start_date}`);

const draft = await polita.createOrder({
  customer: { phone: '+37369123456', name: 'Ion Popescu' },
  products: [{ ...quote, start_date: offer.min_start_date, insurance_company: offer.company }],
});
console.log(`draft:     ${draft.id}, ${draft.price} MDL`);

// Or confirmOrder({ id, payment }) with a customer payment you collected.
await polita.payOrderFromBalance({ id: draft.id });
const order = await polita.waitForOrder(draft.id, { timeoutMs: 60_000 });
console.log(`${order.status}: ${order.products?.map((p) => p.file).join(' ') ?? order.failure_reason}`);

import { sellModule } from '../../app/portal/sell.ts';
import { fieldsOf, valuesOf, type Field, type Values } from '../schema-form.ts';
import { stored } from '../reasons.ts';
import type { Desk, SaleState } from './desk.ts';

/** What an offer of a product's get-offers answer looks like on the desk. */
export interface DeskOffer {
  name: string;
  price: number;
  details: string[];
  /** The offer's own plain values, handed to the create-order form. */
  chosen: SaleState['offer'];
}

const isRecord = (v: unknown): v is Record<string, unknown> =>
  typeof v === 'object' && v !== null && !Array.isArray(v);
const scalars = (o: Record<string, unknown>): SaleState['offer'] =>
  Object.fromEntries(
    Object.entries(o).flatMap(([k, v]) =>
      v === null || typeof v === 'string' || typeof v === 'number' || typeof v === 'boolean' ? [[k, v]] : [],
    ),
  );
const text = (v: unknown) => (typeof v === 'string' || typeof v === 'number' ? String(v) : '');

/**
 * The offers of a get-offers answer, cheapest first (the order a cashier compares them in; a stable
 * sort keeps the API's among equals): its `offers` list, or, for the one product whose answer groups
 * them by insured amount (medical), every company's offer of every amount.
 */
export function offersOf(desk: Desk, answer: object): DeskOffer[] {
  return listed(desk, answer).sort((a, b) => a.price - b.price);
}

function listed(desk: Desk, answer: object): DeskOffer[] {
  const { t, words } = desk;
  const offers = 'offers' in answer ? answer.offers : undefined;
  if (Array.isArray(offers)) {
    return offers.filter(isRecord).map((o) => ({
      name: text(o.name ?? o.product),
      price: Number(o.price),
      details: [
        o.reference_price
          ? t('sell.referencePrice', {
              price: text(o.reference_price),
              rate: text(o.reference_exchange_rate),
            })
          : '',
        typeof o.min_start_date === 'string'
          ? t('sell.startsFrom', { date: words.f.date(o.min_start_date) })
          : '',
        stored(t, text(o.message)),
      ].filter(Boolean),
      chosen: scalars(o),
    }));
  }
  if (isRecord(offers)) {
    return Object.entries(offers).flatMap(([amount, list]) =>
      (Array.isArray(list) ? list : []).filter(isRecord).map((o) => {
        const company = text(o.companyName);
        const region = typeof o.region === 'string' && o.region ? desk.territory(o.region) : '';
        return {
          name: region
            ? t('sell.medicalOffer', { company, amount, region })
            : t('sell.medicalOfferNoRegion', { company, amount }),
          price: Number(o.priceMDL),
          details: [],
          chosen: { ...scalars(o), amount },
        };
      }),
    );
  }
  return [];
}

/** The create-order fields an offer decides, under another name than its own. */
const OFFER_NAMES: Record<string, string> = { insurance_company: 'company', company_name: 'companyName' };
/** Fields an offer or the quote fill in that the cashier may still change. */
const EDITABLE = new Set(['start_date', 'end_date']);
/** Fields of which a request holds one or the other: the quote's choice leaves the other out. */
const EITHER: readonly (readonly [string, string])[] = [['vehicle', 'foreign_vehicle']];

/** What the quote chose of `EITHER`: the other is no part of the create-order form. */
export const notChosen = (quote: Record<string, unknown>): string[] =>
  EITHER.flatMap(([a, b]) => (quote[a] !== undefined ? [b] : quote[b] !== undefined ? [a] : []));

const leaves = (fs: readonly Field[]): Field[] =>
  fs.flatMap((f) => (f.kind === 'group' || f.kind === 'list' ? leaves(f.children ?? []) : [f]));

/**
 * What the chosen offer and the quote fill in of the create-order form: its values, its rows, and
 * the fields they decide (shown as chosen, not asked again).
 */
export function prefill(desk: Desk, sale: SaleState) {
  const m = sellModule(sale.product);
  const tree = fieldsOf(m.schemas.order, {
    values: new Map(),
    rows: new Map(),
    choices: desk.choices,
    words: desk.words,
  });
  const { values: fromQuote, rows } = valuesOf(sale.quote);
  const values: Values = new Map();
  const fixed = new Set<string>();
  // A list of dates in the quote (medical's birthdays) fills the first date of each row.
  for (const list of tree.filter((f) => f.kind === 'list')) {
    const n = rows.get(list.key) ?? 0;
    if (n) rows.set(list.key, n);
    for (let i = 0; i < n; i++) {
      const given = fromQuote.get(`${list.key}.${i}`);
      const date = list.children?.[0]?.children?.find((c) => c.kind === 'date');
      if (typeof given === 'string' && date)
        values.set(`${list.key}.${i}.${date.key.split('.').at(-1)}`, given);
    }
  }
  const offer = sale.offer;
  for (const leaf of leaves(tree)) {
    const top = leaf.key.split('.')[0]!;
    const byOffer = offer[leaf.key] ?? offer[OFFER_NAMES[leaf.key] ?? ''];
    const v =
      byOffer !== undefined && byOffer !== null && leaf.key === top ? byOffer : fromQuote.get(leaf.key);
    if (v === undefined || v === '') continue;
    values.set(leaf.key, Array.isArray(v) ? v.map(String) : String(v));
    if (!EDITABLE.has(leaf.key)) fixed.add(leaf.key);
  }
  if (!values.has('start_date') && typeof offer.min_start_date === 'string') {
    values.set('start_date', offer.min_start_date);
  }
  return { values, rows, fixed, skip: new Set([...fixed, ...notChosen(sale.quote)]) };
}

import { Type, type Static } from '@sinclair/typebox';
import { checkAll, productRule } from '../domain/errors.ts';
import { formatDmy } from '../domain/time.ts';
import {
  Amount,
  convertedPrice,
  minorOf,
  type StoredConversion,
  storedConversion,
  storedReference,
} from './pricing.ts';
import { issued, issuedPrice, offerPrice, policyLines, priceLines, priceProperties } from './fields.ts';
import { insurerName, offerWindow, requireIdnx, requireWindowStart, S, StartWindow } from './shared.ts';
import { defineProduct, type ProductContext } from './types.ts';

/**
 * Air baggage insurance: per-flight cover for 1 to 5 checked pieces, priced per piece in EUR
 * by each insurer. The flights do not change the price, so the quote needs only the pieces.
 */
const CatalogueSchema = Type.Object({
  ...StartWindow,
  currency: Type.String({ pattern: '^[A-Z]{3}$' }),
  fee_mdl: Amount,
  max_pieces: Type.Integer({ minimum: 1, maximum: 5 }),
  insurers: Type.Array(Type.Object({ company: Type.String(), price_per_piece: Amount }), { minItems: 1 }),
});
type BaggageCatalogue = Static<typeof CatalogueSchema>;
type Insurer = BaggageCatalogue['insurers'][number];

const Pieces = Type.Integer({ minimum: 1, maximum: 5, description: 'Checked pieces, 1 to 5' });
/** IATA flight designator: airline code (2 characters, or 3 letters ICAO) and 1–4 digits. */
const FlightNumber = Type.String({
  pattern: '^(?:[A-Za-z0-9]{2}|[A-Za-z]{3}) ?[0-9]{1,4}[A-Za-z]?$',
  description: 'Flight number, e.g. FR1234 or 9U 123',
});

const quoteSchema = Type.Object({ baggage_pcs: Pieces });
const orderSchema = Type.Object({
  start_date: S.date('Departure date per the airline tickets, yyyy-mm-dd'),
  flight_numbers: Type.Array(FlightNumber, { minItems: 1, maxItems: 8, uniqueItems: true }),
  baggage_pcs: Pieces,
  idnp: S.idnp(),
  contractor_full_name: S.text(),
  insurance_company: Type.String({ minLength: 1, maxLength: 50, description: 'The offer `company`' }),
});

function baggagePrice(ctx: ProductContext, cat: BaggageCatalogue, insurer: Insurer, pieces: number) {
  if (pieces > cat.max_pieces) throw productRule(`baggage_pcs must be between 1 and ${cat.max_pieces}`);
  return convertedPrice(ctx, minorOf(insurer.price_per_piece) * pieces, cat.currency, cat.fee_mdl);
}

const piecesText = (n: number) => (n === 1 ? '1 bagaj' : `${n} bagaje`);
const normaliseFlight = (f: string) => f.replace(/\s+/g, '').toUpperCase();

const issuedFields = {
  ...priceProperties,
  flight_numbers: Type.Array(Type.String()),
  baggage_pcs: Type.Number(),
  idnp: Type.String(),
  contractor_full_name: Type.String(),
  insurance_company: Type.String(),
};

interface BaggageDetails extends StoredConversion {
  /** The request, its flight numbers normalised. */
  request: Static<typeof orderSchema>;
}

export const baggage = defineProduct<BaggageDetails>()('baggage', CatalogueSchema, {
  idPrefix: 'IAO',
  schemas: {
    quote: quoteSchema,
    order: orderSchema,
    offer: { company: Type.String() },
    issued: issuedFields,
  },

  async quote(ctx, cat, req) {
    const offers = cat.insurers.map((insurer) => {
      const p = baggagePrice(ctx, cat, insurer, req.baggage_pcs);
      return {
        product: 'baggage',
        name: `Asigurare bagaje, ${piecesText(req.baggage_pcs)}, ${insurerName(ctx, insurer.company)}`,
        company: insurer.company,
        ...offerPrice(p, p.price),
        ...offerWindow(ctx, cat),
      };
    });
    return { offers };
  },

  async price(ctx, cat, item) {
    const [, insurer] = await checkAll(
      () => requireIdnx('idnp', item.idnp, 'idnp'),
      () => {
        const found = cat.insurers.find((i) => i.company === item.insurance_company);
        if (!found) throw productRule(`Unknown insurance_company ${item.insurance_company}`);
        return found;
      },
      () => requireWindowStart(ctx, cat, item.start_date),
    );
    const p = baggagePrice(ctx, cat, insurer, item.baggage_pcs);
    const flights = item.flight_numbers.map(normaliseFlight);
    return {
      price: p.price,
      description: `Asigurare bagaje, ${piecesText(item.baggage_pcs)}, zbor ${flights.join(', ')}`,
      startDate: item.start_date,
      details: {
        request: { ...item, flight_numbers: flights },
        ...storedConversion(ctx, p),
      },
    };
  },

  cover: ({ details: d }) => ({ company: d.request.insurance_company }),

  issue(ctx, _cat, row, receipt) {
    const d = row.details;
    const r = d.request;
    const fields = {
      ...issuedPrice(storedReference(d), row.price),
      flight_numbers: r.flight_numbers,
      baggage_pcs: r.baggage_pcs,
      idnp: r.idnp,
      contractor_full_name: r.contractor_full_name,
      insurance_company: r.insurance_company,
    };
    return issued(fields, 'Poliță de asigurare a bagajelor', [
      ...policyLines(receipt, insurerName(ctx, r.insurance_company)),
      { label: 'Contractant', value: r.contractor_full_name },
      { label: 'IDNP', value: r.idnp },
      { label: 'Data plecării', value: formatDmy(row.start_date!) },
      { label: 'Zboruri', value: r.flight_numbers.join(', ') },
      { label: 'Bagaje asigurate', value: piecesText(r.baggage_pcs) },
      ...priceLines('Primă de referință', fields, row.price),
    ]);
  },
});

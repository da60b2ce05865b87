import { addDays } from '../domain/time.ts';
import type { ProductCode } from '../products/registry.ts';

/**
 * Request examples of the API document, one per product, written for the sandbox's test vehicles
 * (decision 0020) and valid identity numbers, with dates inside each product's window counted from
 * `today` (the service clock's local date): the document is built with them on every request, so
 * every example works on the day it is read. test/http/openapi.test.ts sends each one.
 */
export interface ProductExample {
  quote: Record<string, unknown>;
  /** The create-order body (customer and one product). */
  order: Record<string, unknown>;
}

const MD_CAR = '100000001';
// The registered owner of MD_CAR: road tax is bought for the owner's IDNX.
const OWNER_IDNX = '2003000000016';
const TRAVELLER_IDNP = '2005123456783';

export function productExamples(today: string): Record<ProductCode, ProductExample> {
  const day = (n: number) => addDays(today, n);
  const customer = { phone: '+37369000111', name: 'Ion Popescu' };
  const order = (product: Record<string, unknown>, who: Record<string, unknown> = customer) => ({
    customer: who,
    products: [product],
  });
  const trip = {
    covered_territories: ['DEU', 'FRA'],
    start_date: day(8),
    end_date: day(17),
    is_multiple_type: false,
    include_additional_risk: false,
    activity: 'TRVL',
  };
  const foreignCar = {
    registration_country: 'DE',
    category: 'M1',
    plate_number: 'M AB 1234',
    vin: 'WVWZZZ1KZAW000001',
    make: 'Volkswagen',
    model: 'Golf',
  };
  return {
    'vignette:ro': {
      quote: { product: 'vignette:ro', vehicle: MD_CAR, emission_class: 'E0' },
      order: order(
        {
          product: 'vignette:ro',
          foreign_vehicle: foreignCar,
          start_date: day(4),
          duration: 10,
          category: 'A',
          emission_class: 'E0',
        },
        { phone: '+4915112345678', name: 'Hans Müller' },
      ),
    },
    'green-card': {
      quote: { product: 'green-card', region: 'EU', duration: 15, vehicle: MD_CAR, idnx: OWNER_IDNX },
      order: order({
        product: 'green-card',
        vehicle: MD_CAR,
        start_date: day(2),
        duration: 15,
        region: 'EU',
        insurance_company: 'donaris',
        idnx: OWNER_IDNX,
      }),
    },
    rca: {
      quote: { product: 'rca', vehicle: MD_CAR, duration: 365, idnx: OWNER_IDNX },
      order: order({
        product: 'rca',
        vehicle: MD_CAR,
        start_date: day(2),
        duration: 365,
        insurance_company: 'moldasig',
        idnx: OWNER_IDNX,
      }),
    },
    medical: {
      quote: { product: 'medical', ...trip, persons: ['1990-05-10', '2015-03-01'] },
      order: order({
        product: 'medical',
        ...trip,
        persons: [
          {
            first_name: 'Elena',
            last_name: 'Munteanu',
            birthday: '1990-05-10',
            address: 'str. Ștefan cel Mare 1, Chișinău',
            passport: 'AB1234567',
            idnp: TRAVELLER_IDNP,
          },
        ],
        amount: '30000',
        company_name: 'Donaris VIG',
        contractor: {
          type: 'company',
          fullName: 'Trans Cargo SRL',
          idnx: '1021600002204',
          address: 'Chișinău',
        },
      }),
    },
    baggage: {
      quote: { product: 'baggage', baggage_pcs: 2 },
      order: order({
        product: 'baggage',
        start_date: day(8),
        flight_numbers: ['FR1234', '9U123'],
        baggage_pcs: 2,
        idnp: TRAVELLER_IDNP,
        contractor_full_name: 'Elena Munteanu',
        insurance_company: 'moldasig',
      }),
    },
    'road-tax': {
      quote: { product: 'road-tax', vehicle: MD_CAR, idnx: OWNER_IDNX },
      order: order({
        product: 'road-tax',
        vehicle: MD_CAR,
        idnx: OWNER_IDNX,
        contractor_full_name: 'Ion Popescu',
        locality_id: 100000,
        locality_name: 'Chișinău',
        region: 'mun. Chișinău',
      }),
    },
    'vignette:md': {
      quote: { product: 'vignette:md', period: '7_days', vehicle_category: 'M1' },
      order: order(
        {
          product: 'vignette:md',
          identity_document: 'C01X00T47',
          driver_full_name: 'Hans Müller',
          country: 'DEU',
          start_date: day(4),
          period: '7_days',
          vehicle_category: 'M1',
          registration_number: 'B AB 1234',
          vin: 'WDD2050071F000001',
        },
        { phone: '+4915112345678', name: 'Hans Müller' },
      ),
    },
    'vignette:eu': {
      quote: { product: 'vignette:eu', country: 'HU', vehicle: MD_CAR, lang: 'EN' },
      order: order(
        {
          product: 'vignette:eu',
          country: 'HU',
          validity: '10d',
          start_date: day(1),
          foreign_vehicle: {
            ...foreignCar,
            registration_country: 'AT',
            plate_number: 'W 12345 X',
            places: 5,
          },
        },
        { phone: '+43664123456', name: 'Anna Gruber' },
      ),
    },
    'roadside-assistance-eu': {
      quote: { product: 'roadside-assistance-eu', vehicle: MD_CAR },
      order: order({
        product: 'roadside-assistance-eu',
        vehicle: MD_CAR,
        start_date: day(2),
        period: '12_months',
      }),
    },
  };
}

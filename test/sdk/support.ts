import type { OrderItems } from '../../sdk/src/index.ts';

/** An rca create-order product object for the sandbox's ordinary car, typed as the SDK types it. */
export const rcaItem = (start_date: string, over: Partial<OrderItems['rca']> = {}): OrderItems['rca'] => ({
  product: 'rca',
  vehicle: '100000001',
  start_date,
  duration: 365,
  insurance_company: 'moldasig',
  idnx: '2003000000016',
  ...over,
});

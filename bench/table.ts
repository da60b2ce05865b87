/**
 * The benchmark's rows (bench/run.ts runs them). Apart from scenarios.ts, whose helpers the row
 * modules (get-order.ts, payments.ts) import: listed there, each would import the other.
 */
import { PGBENCH_SCALE_WIDE, type Anchor } from './anchors.ts';
import { getOrder } from './get-order.ts';
import { payments } from './payments.ts';
import {
  fmt,
  offers,
  pairs,
  pctOf,
  type Anchors,
  type Measured,
  type Scenario,
  type Verdict,
} from './scenarios.ts';

/** Judged against an anchor's rate: at least `min` of it. */
function shareOf(key: keyof Anchors, min: number, unit: string) {
  return (m: Measured, anchors: Anchors): Verdict => {
    const a = anchors[key];
    if (!a) return { anchor: 'not measured', ratio: '—', target: `≥ ${100 * min} %`, met: undefined };
    return {
      anchor: `${a.name}: ${fmt(a.rate)} ${a.unit}`,
      ratio: `${pctOf(m.rate, a.rate)} (${unit} ÷ ${a.unit})`,
      target: `≥ ${100 * min} %`,
      met: m.rate / a.rate >= min,
    };
  };
}

/** A payment row's anchor cell: the bare transaction's pooled rate, ± half the spread of its windows. */
const walletCell = (a: Anchor & { drift: number }) =>
  `${a.name}: ${fmt(a.rate)} ${a.unit} ± ${fmt((100 * a.drift) / 2)} %`;

const RCA_ITEM = {
  product: 'rca',
  vehicle: '100000001',
  duration: 365,
  insurance_company: 'moldasig',
  idnx: '2003000000016',
};

/**
 * The scenario table, with decision 0022's targets. Another product's quote is one line:
 * `offers('get-offers green-card', {...})`; another way to pay is one line:
 * `pairs('create+pay-from-balance rca', [RCA_ITEM], (o) => ['pay-order-from-balance', { id: o.id }])`
 * (mind the demo wallet's 10 500 MDL).
 */
export const SCENARIOS: Scenario[] = [
  offers(
    'get-offers rca',
    { product: 'rca', vehicle: '100000001', duration: 365, idnx: '2003000000016' },
    { share: 0.5, p99Ms: 10 },
  ),
  offers('get-offers medical', {
    product: 'medical',
    covered_territories: ['DEU', 'FRA'],
    persons: ['1990-05-10', '2015-03-01'],
    start_date: '2026-12-01',
    end_date: '2026-12-10',
    is_multiple_type: false,
    include_additional_risk: false,
    activity: 'TRVL',
  }),
  offers('get-offers vignette:eu', {
    product: 'vignette:eu',
    country: 'HU',
    vehicle: '100000001',
    lang: 'EN',
  }),
  {
    ...pairs('create+confirm rca', [RCA_ITEM], (o) => [
      'confirm-order',
      {
        id: o.id,
        payment: {
          receipt_id: `R${o.id}`,
          transaction_id: `T${o.id}`,
          paid_at: Date.now(),
          amount: o.price,
        },
      },
    ]),
    anchors: ['pgbench', 'pgbenchWide'],
    judge(m, anchors) {
      const v = shareOf('pgbench', 0.4, 'pairs/s')(m, anchors);
      const wide = anchors.pgbenchWide;
      // Shown beside the judged anchor unless it is that anchor (BENCH_PGBENCH_SCALE=50).
      return wide && wide !== anchors.pgbench
        ? {
            ...v,
            anchor: `${v.anchor}; scale ${PGBENCH_SCALE_WIDE}: ${fmt(wide.rate)} tps`,
            ratio: `${v.ratio}; ${pctOf(m.rate, wide.rate)} of scale ${PGBENCH_SCALE_WIDE}`,
          }
        : v;
    },
  },
  {
    ...payments('pay-from-balance rca, 50 partners', RCA_ITEM, 50),
    judge(m) {
      const a = m.anchor;
      return {
        anchor: a ? walletCell(a) : 'not measured',
        ratio: a ? `${pctOf(m.rate, a.rate)} (payments/s ÷ tx/s)` : '—',
        target: '≥ 60 %',
        met: a ? m.rate / a.rate >= 0.6 : undefined,
      };
    },
  },
  {
    ...payments('pay-from-balance rca, one hot wallet', RCA_ITEM, 1),
    judge(m) {
      const a = m.anchor;
      return {
        anchor: a ? `${walletCell(a)}, p99 ${fmt(a.p99Ms, 1)} ms` : 'not measured',
        ratio: a ? `${pctOf(m.rate, a.rate)} (payments/s ÷ tx/s)` : '—',
        target: 'p99 < 100 ms',
        met: m.p99Ms < 100,
      };
    },
  },
  getOrder,
];

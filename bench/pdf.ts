import { randomUUID } from 'node:crypto';
import { renderPolicyPdf, type PolicyDocument } from '../src/documents/policy-pdf.ts';

/**
 * `npm run bench:pdf`: what one policy PDF costs on this thread, apart from the service: CPU
 * milliseconds a policy and bytes a policy, over BENCH_PDFS (default 3 000) RCA policies after 300
 * unrecorded ones (the faces parsed, V8 warm). Every policy has an order id, a customer and a phone
 * number of its own, as issuance's have, so words never seen before are shaped each time; the
 * labels, headings and names repeat as they do in a day's policies. Prints one JSON line.
 */
const N = Number(process.env.BENCH_PDFS || 3000);
const FIRST = ['Ștefan', 'Ana', 'Ion', 'Maria', 'Vasile', 'Elena', 'Petru', 'Tatiana', 'Gheorghe', 'Natalia'];
const LAST = [
  'Țurcanu',
  'Popa',
  'Rusu',
  'Lungu',
  'Cazacu',
  'Ciobanu',
  'Munteanu',
  'Ceban',
  'Bălan',
  'Moraru',
];

function policy(i: number): PolicyDocument {
  const name = `${FIRST[i % FIRST.length]!} ${LAST[Math.floor(i / FIRST.length) % LAST.length]!}`;
  return {
    title: 'Poliță de asigurare obligatorie RCA',
    orderId: randomUUID(),
    product: 'rca',
    issuedAt: '21.11.2026 14:03',
    partnerName: 'Î.M. Țară Broker S.R.L.',
    customer: { name, phone: `+3736${String(9_000_000 + i).slice(-7)}`, email: `client${i}@example.md` },
    fields: [
      { label: 'Asigurător', value: 'Î.M. Țară Asigurări' },
      { label: 'Număr poliță', value: `RCA-${String(100_000_000 + i)}` },
      { label: 'Număr de înmatriculare', value: `CHY${String(100 + (i % 900))}` },
      { label: 'Vehicul', value: 'HONDA CIVIC, 2019' },
      { label: 'IDNP', value: String(2_001_000_000_000 + i) },
      { label: 'Zona de acoperire', value: 'Republica Moldova' },
    ],
    price: `${(1000 + (i % 500)).toFixed(2)} MDL`,
    startDate: '22.11.2026',
    endDate: '21.11.2027',
  };
}

for (let i = 0; i < 300; i++) await renderPolicyPdf(policy(i));
const cpu = process.cpuUsage();
const wall = performance.now();
let bytes = 0;
for (let i = 0; i < N; i++) bytes += (await renderPolicyPdf(policy(300 + i))).length;
const used = process.cpuUsage(cpu);
console.log(
  JSON.stringify({
    policies: N,
    cpuMsPerPolicy: Number(((used.user + used.system) / 1000 / N).toFixed(3)),
    wallMsPerPolicy: Number(((performance.now() - wall) / N).toFixed(3)),
    bytesPerPolicy: Math.round(bytes / N),
  }),
);

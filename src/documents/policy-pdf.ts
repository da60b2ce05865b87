import { readFile } from 'node:fs/promises';
import { create, type Font } from 'fontkit';
import { withFastSubset } from './ttf-subset.ts';
import PDFDocument from 'pdfkit';

export interface PolicyField {
  label: string;
  value: string;
}

export interface PolicyDocument {
  title: string;
  orderId: string;
  product: string;
  issuedAt: string;
  partnerName: string;
  customer: { name?: string; phone: string; email?: string };
  fields: PolicyField[];
  price: string;
  startDate?: string;
  endDate?: string;
}

type Doc = PDFKit.PDFDocument;

// The 14 standard PDF fonts are WinAnsi-only and cannot show ș/ț (U+0219/U+021B),
// so a TrueType font with full Romanian coverage is embedded (pdfkit subsets it).
const FONT_DIR = new URL('../../assets/fonts/', import.meta.url);
const REGULAR = 'DejaVuSans';
const BOLD = 'DejaVuSans-Bold';

type Fonts = Record<'regular' | 'bold', Font>;

// pdfkit takes a parsed fontkit font wherever it takes a font file (PDFFontFactory.open).
declare global {
  // eslint-disable-next-line @typescript-eslint/no-namespace
  namespace PDFKit.Mixins {
    interface PDFFont {
      registerFont(name: string, src: Font): this;
    }
  }
}

let fontCache: Promise<Fonts> | undefined;

/**
 * Parsing DejaVu's large GPOS/GSUB tables dominates render time (~40 ms a document when
 * every document parses the TTF again, under 10 ms when the parsed font is reused): each face is
 * parsed once with fontkit (the parser pdfkit itself uses), and pdfkit embeds a parsed fontkit
 * font as it embeds a file.
 */
function parseOnce(file: Buffer): Font {
  const parsed = create(file);
  if (!('layout' in parsed)) throw new Error('a policy font must be one face, not a collection');
  return withFastSubset(withLayoutMemo(parsed), file);
}

/** Distinct words laid out and remembered per face; past it the memo starts again. */
const LAYOUT_MEMO_WORDS = 5_000;

/**
 * The face with `layout` remembered per word (and each glyph's outline decoded once, below). Shaping a word through DejaVu's GSUB/GPOS tables was
 * a sixth of a policy's render time, and a policy is mostly the same words (labels, headings,
 * footer, product names). pdfkit lays text out word by word and scales the positions it is given
 * in place, so each call answers a fresh copy of the remembered positions. Everything else is the
 * parsed face itself (the prototype), so pdfkit sees a fontkit font.
 */
function withLayoutMemo(font: Font): Font {
  type Run = ReturnType<Font['layout']>;
  const memo = new Map<string, Run>();
  const layout = (text: string, features?: Parameters<Font['layout']>[1]): Run => {
    if (features !== undefined) return font.layout(text, features);
    let run = memo.get(text);
    if (!run) {
      if (memo.size >= LAYOUT_MEMO_WORDS) memo.clear();
      run = font.layout(text);
      memo.set(text, run);
    }
    return Object.assign(Object.create(Object.getPrototypeOf(run) as object) as Run, run, {
      positions: run.positions.map((p) =>
        Object.assign(Object.create(Object.getPrototypeOf(p) as object), p),
      ),
    });
  };
  return Object.create(font, {
    layout: { value: layout },
    getGlyph: { value: (id: number, codePoints?: number[]) => decodeOnce(font.getGlyph(id, codePoints)) },
  }) as Font;
}

const decodedOnce = new WeakSet<object>();

/**
 * A glyph whose outline is decoded once per process. pdfkit's subset decodes the outline of every
 * glyph a policy uses, every policy (a fifth of its render time; fontkit caches the glyph object,
 * not its outline). `_decode` is fontkit's own (2.0.4, pinned) and answers the same for a glyph
 * every time; a fontkit without it is used as it is. Tested: the PDFs are byte for byte the same.
 */
function decodeOnce<G extends object>(glyph: G): G {
  if (decodedOnce.has(glyph) || !hasDecode(glyph)) return glyph;
  decodedOnce.add(glyph);
  const decode = glyph._decode.bind(glyph);
  let outline: { value: unknown } | undefined;
  glyph._decode = () => (outline ??= { value: decode() }).value;
  return glyph;
}

function hasDecode(glyph: object): glyph is { _decode: () => unknown } {
  return typeof (glyph as { _decode?: unknown })._decode === 'function';
}

// Read and parse once per process: every render needs both faces.
function loadFonts(): Promise<Fonts> {
  fontCache ??= Promise.all([
    readFile(new URL(`${REGULAR}.ttf`, FONT_DIR)),
    readFile(new URL(`${BOLD}.ttf`, FONT_DIR)),
  ]).then(
    ([regular, bold]) => ({ regular: parseOnce(regular), bold: parseOnce(bold) }),
    (err: unknown) => {
      // Don't memoise a failure (e.g. a transient EMFILE): the next render retries.
      fontCache = undefined;
      throw err;
    },
  );
  return fontCache;
}

const MARGIN = 50;
// Extra room under the content area so the footer never collides with body text.
const FOOTER_BAND = 36;
const INK = '#1a1a1a';
const MUTED = '#5f6b76';
const BRAND = '#1f4e79';
const RULE = '#d0d7de';
const TINT = '#eef3f8';
const ZEBRA = '#f7f9fb';
const CELL_PAD = 6;
// A little air between wrapped lines; DejaVu's default leading looks cramped in bold.
const LINE_GAP = 1.5;

interface Style {
  font: string;
  size: number;
  color: string;
  align?: 'left' | 'right';
}
const CAPTION: Style = { font: REGULAR, size: 8, color: MUTED };
const SECTION: Style = { font: BOLD, size: 9, color: BRAND };
const BODY: Style = { font: REGULAR, size: 10, color: INK };
const STRONG: Style = { font: BOLD, size: 10, color: INK };
const CELL_LABEL: Style = { font: REGULAR, size: 9.5, color: MUTED };
const CELL_VALUE: Style = { font: BOLD, size: 9.5, color: INK };

function heightOf(doc: Doc, s: Style, text: string, width: number): number {
  doc.font(s.font).fontSize(s.size);
  return doc.heightOfString(text, { width, lineGap: LINE_GAP });
}

function put(doc: Doc, s: Style, text: string, x: number, y: number, width: number): void {
  const options = { width, align: s.align ?? 'left', lineGap: LINE_GAP };
  doc.font(s.font).fontSize(s.size).fillColor(s.color).text(text, x, y, options);
}

function rule(doc: Doc, x: number, y: number, w: number, weight = 0.5, color = RULE): void {
  doc.moveTo(x, y).lineTo(x + w, y);
  doc.lineWidth(weight).strokeColor(color).stroke();
}

/** Starts a new page when `needed` points don't fit; returns the y to draw at. */
function ensureRoom(doc: Doc, y: number, needed: number): number {
  if (y + needed <= doc.page.height - doc.page.margins.bottom) return y;
  doc.addPage();
  return doc.page.margins.top;
}

function drawHeader(doc: Doc, d: PolicyDocument, x: number, y: number, w: number): number {
  put(doc, { font: BOLD, size: 11, color: BRAND }, 'Polita', x, y, w);
  y += 18;
  const title: Style = { font: BOLD, size: 20, color: INK };
  put(doc, title, d.title, x, y, w);
  y += heightOf(doc, title, d.title, w) + 10;

  // Order ids can be long (UUIDs), so that column gets most of the width.
  const cols: [string, string, number][] = [
    ['NR. COMANDĂ', d.orderId, 0.5],
    ['PRODUS', d.product, 0.2],
    ['EMIS LA', d.issuedAt, 0.3],
  ];
  let cx = x;
  let tallest = 0;
  for (const [label, value, share] of cols) {
    const cw = w * share - 8;
    put(doc, CAPTION, label, cx, y, cw);
    put(doc, STRONG, value, cx, y + 12, cw);
    tallest = Math.max(tallest, 12 + heightOf(doc, STRONG, value, cw));
    cx += w * share;
  }
  y += tallest + 12;
  rule(doc, x, y, w, 1, BRAND);
  return y + 16;
}

function drawParties(doc: Doc, d: PolicyDocument, x: number, y: number, w: number): number {
  const gap = 16;
  const pad = 10;
  const bw = (w - gap) / 2;
  const inner = bw - 2 * pad;
  const customer: [Style, string][] = [];
  if (d.customer.name) customer.push([STRONG, d.customer.name]);
  customer.push([BODY, `Telefon: ${d.customer.phone}`]);
  if (d.customer.email) customer.push([BODY, `E-mail: ${d.customer.email}`]);
  const boxes: [string, [Style, string][]][] = [
    ['ASIGURAT / CLIENT', customer],
    ['PARTENER', [[STRONG, d.partnerName]]],
  ];

  const bodyHeight = (lines: [Style, string][]): number =>
    lines.reduce((h, [style, text]) => h + heightOf(doc, style, text, inner) + 3, 0);
  const boxH = pad + 16 + Math.max(...boxes.map(([, lines]) => bodyHeight(lines))) + 8;
  y = ensureRoom(doc, y, boxH);

  boxes.forEach(([heading, lines], i) => {
    const bx = x + i * (bw + gap);
    doc.roundedRect(bx, y, bw, boxH, 4).lineWidth(0.75).strokeColor(RULE).stroke();
    put(doc, SECTION, heading, bx + pad, y + pad, inner);
    let ly = y + pad + 16;
    for (const [style, text] of lines) {
      put(doc, style, text, bx + pad, ly, inner);
      ly += heightOf(doc, style, text, inner) + 3;
    }
  });
  return y + boxH + 20;
}

function drawFields(doc: Doc, fields: PolicyField[], x: number, y: number, w: number): number {
  if (fields.length === 0) return y;
  y = ensureRoom(doc, y, 40);
  put(doc, SECTION, 'DETALII POLIȚĂ', x, y, w);
  y += 16;

  const labelW = w * 0.38 - 2 * CELL_PAD;
  const valueX = x + w * 0.38 + CELL_PAD;
  const valueW = w * 0.62 - 2 * CELL_PAD;
  fields.forEach((field, i) => {
    // A blank cell reads like a rendering fault on paper, so show a dash instead.
    const value = field.value === '' ? '—' : field.value;
    const rowH =
      Math.max(heightOf(doc, CELL_LABEL, field.label, labelW), heightOf(doc, CELL_VALUE, value, valueW)) +
      2 * CELL_PAD;
    y = ensureRoom(doc, y, rowH);
    // Fill before the rules so the zebra band never paints over a row's border.
    if (i % 2 === 1) doc.rect(x, y, w, rowH).fill(ZEBRA);
    rule(doc, x, y, w);
    put(doc, CELL_LABEL, field.label, x + CELL_PAD, y + CELL_PAD, labelW);
    put(doc, CELL_VALUE, value, valueX, y + CELL_PAD, valueW);
    y += rowH;
    rule(doc, x, y, w);
  });
  return y + 20;
}

function periodText(start?: string, end?: string): string | undefined {
  if (start && end) return `${start} – ${end}`;
  if (start) return `din ${start}`;
  if (end) return `până la ${end}`;
  return undefined;
}

function drawTotals(doc: Doc, d: PolicyDocument, x: number, y: number, w: number): number {
  const period = periodText(d.startDate, d.endDate);
  const periodStyle: Style = { font: BOLD, size: 12, color: INK };
  const priceStyle: Style = { font: BOLD, size: 18, color: BRAND, align: 'right' };
  const half = (w - 32) / 2;
  const valueH = Math.max(
    period ? heightOf(doc, periodStyle, period, half) : 0,
    heightOf(doc, priceStyle, d.price, half),
  );
  const boxH = 16 + 14 + valueH + 14;
  y = ensureRoom(doc, y, boxH);
  doc.roundedRect(x, y, w, boxH, 4).fill(TINT);
  const rightX = x + w - 16 - half;
  if (period) {
    put(doc, CAPTION, 'PERIOADA DE VALABILITATE', x + 16, y + 16, half);
    put(doc, periodStyle, period, x + 16, y + 32, half);
  }
  put(doc, { ...CAPTION, align: 'right' }, 'TOTAL DE PLATĂ', rightX, y + 16, half);
  put(doc, priceStyle, d.price, rightX, y + 28, half);
  return y + boxH + 20;
}

function drawFooters(doc: Doc, x: number, w: number): void {
  const range = doc.bufferedPageRange();
  for (let i = range.start; i < range.start + range.count; i++) {
    doc.switchToPage(i);
    // Writing inside the bottom margin would make pdfkit add a page; lift the margin briefly.
    const bottom = doc.page.margins.bottom;
    doc.page.margins.bottom = 0;
    const fy = doc.page.height - MARGIN - 10;
    rule(doc, x, fy - 8, w);
    put(doc, CAPTION, 'Document generat electronic. Verificați valabilitatea la emitent.', x, fy, w * 0.8);
    put(doc, { ...CAPTION, align: 'right' }, `Pagina ${i + 1} / ${range.count}`, x + w * 0.8, fy, w * 0.2);
    doc.page.margins.bottom = bottom;
  }
}

export async function renderPolicyPdf(d: PolicyDocument): Promise<Buffer> {
  const fonts = await loadFonts();
  const options: PDFKit.PDFDocumentOptions = {
    size: 'A4',
    margins: { top: MARGIN, left: MARGIN, right: MARGIN, bottom: MARGIN + FOOTER_BAND },
    compress: true,
    // Footers need the final page count, so pages stay in memory until the end.
    bufferPages: true,
    lang: 'ro-RO',
    displayTitle: true,
    info: {
      Title: d.title,
      Author: 'Polita',
      Subject: `${d.title} — ${d.orderId}`,
      Creator: 'Polita',
      Producer: 'Polita',
    },
  };
  // Without a default font of its own pdfkit parses Helvetica's metrics for every document. pdfkit
  // takes any font source there (PDFFontFactory.open); @types/pdfkit narrows it to a name.
  const doc = new PDFDocument(Object.assign(options, { font: fonts.regular }));
  doc.registerFont(REGULAR, fonts.regular);
  doc.registerFont(BOLD, fonts.bold);

  const chunks: Buffer[] = [];
  const done = new Promise<Buffer>((resolve, reject) => {
    doc.on('data', (chunk: Buffer) => chunks.push(chunk));
    doc.on('end', () => resolve(Buffer.concat(chunks)));
    doc.on('error', reject);
  });

  const x = doc.page.margins.left;
  const w = doc.page.width - doc.page.margins.left - doc.page.margins.right;
  let y = doc.page.margins.top;
  y = drawHeader(doc, d, x, y, w);
  y = drawParties(doc, d, x, y, w);
  y = drawFields(doc, d.fields, x, y, w);
  drawTotals(doc, d, x, y, w);
  drawFooters(doc, x, w);

  doc.end();
  return done;
}

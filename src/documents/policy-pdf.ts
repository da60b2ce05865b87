import { readFile } from 'node:fs/promises';
import { create } from 'fontkit';
import { PdfDocument, PdfFace, wrapText } from './pdf-writer.ts';
import { PRODUCT_NAMES_RO } from './product-names.ts';

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
  /** A sandbox's policy: marked `SPECIMEN — sandbox` on every page, so nobody takes it for a real one. */
  specimen?: boolean;
}

// The 14 standard PDF fonts are WinAnsi-only and cannot show ș/ț (U+0219/U+021B),
// so a TrueType font with full Romanian coverage is embedded (subset to the glyphs a policy uses).
const FONT_DIR = new URL('../../assets/fonts/', import.meta.url);
const REGULAR = 'DejaVuSans';
const BOLD = 'DejaVuSans-Bold';

type Fonts = Record<'regular' | 'bold', PdfFace>;

let fontCache: Promise<Fonts> | undefined;

/**
 * Parsing DejaVu's large GPOS/GSUB tables dominates a render when every document parses the TTF
 * again (decision 0029): each face is parsed once per process with fontkit, which shapes the
 * text, and its words' layouts are remembered (PdfFace).
 */
function parseOnce(file: Buffer): PdfFace {
  const parsed = create(file);
  if (!('layout' in parsed)) throw new Error('a policy font must be one face, not a collection');
  return new PdfFace(parsed, file);
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

const PAGE_WIDTH = 595.28; // A4, in points
const PAGE_HEIGHT = 841.89;
const MARGIN = 50;
// Extra room under the content area so the footer never collides with body text.
const FOOTER_BAND = 36;
/** Where body text stops and the footer's band begins. */
const BODY_BOTTOM = PAGE_HEIGHT - MARGIN - FOOTER_BAND;
const INK = '#1a1a1a';
const MUTED = '#5f6b76';
const BRAND = '#1f4e79';
const RULE = '#d0d7de';
const TINT = '#eef3f8';
const ZEBRA = '#f7f9fb';
const SPECIMEN = '#b42318';
export const SPECIMEN_TEXT = 'SPECIMEN — sandbox';
const CELL_PAD = 6;
// A little air between wrapped lines; DejaVu's default leading looks cramped in bold.
const LINE_GAP = 1.5;

interface Style {
  font: keyof Fonts;
  size: number;
  color: string;
  align?: 'left' | 'right';
}
const CAPTION: Style = { font: 'regular', size: 8, color: MUTED };
const SECTION: Style = { font: 'bold', size: 9, color: BRAND };
const BODY: Style = { font: 'regular', size: 10, color: INK };
const STRONG: Style = { font: 'bold', size: 10, color: INK };
const CELL_LABEL: Style = { font: 'regular', size: 9.5, color: MUTED };
const CELL_VALUE: Style = { font: 'bold', size: 9.5, color: INK };

/** A policy being drawn: the document and the faces its styles name. */
interface Canvas {
  doc: PdfDocument;
  fonts: Fonts;
}

function lineStep(c: Canvas, s: Style): number {
  return c.fonts[s.font].lineHeight(s.size) + LINE_GAP;
}

function heightOf(c: Canvas, s: Style, text: string, width: number): number {
  return wrapText(c.fonts[s.font], s.size, text, width).length * lineStep(c, s);
}

/**
 * `text` wrapped to `width` with its first line's top at (x, y). A line that would cross `bottom`
 * goes to the top of a new page, as the rest of the text does.
 */
function put(
  c: Canvas,
  s: Style,
  text: string,
  x: number,
  y: number,
  width: number,
  bottom = BODY_BOTTOM,
): void {
  const face = c.fonts[s.font];
  const step = lineStep(c, s);
  for (const line of wrapText(face, s.size, text, width)) {
    if (y + face.lineHeight(s.size) > bottom) {
      c.doc.addPage();
      y = MARGIN;
    }
    const shift = s.align === 'right' ? width - face.widthOf(line.replace(/\s+$/, ''), s.size) : 0;
    c.doc.text(face, s.size, s.color, line, x + shift, y);
    y += step;
  }
}

function rule(c: Canvas, x: number, y: number, w: number, weight = 0.5, color = RULE): void {
  c.doc.line(x, y, x + w, y, weight, color);
}

/** Starts a new page when `needed` points don't fit; returns the y to draw at. */
function ensureRoom(c: Canvas, y: number, needed: number): number {
  if (y + needed <= BODY_BOTTOM) return y;
  c.doc.addPage();
  return MARGIN;
}

function drawHeader(c: Canvas, d: PolicyDocument, x: number, y: number, w: number): number {
  put(c, { font: 'bold', size: 11, color: BRAND }, 'Polita', x, y, w);
  y += 18;
  const title: Style = { font: 'bold', size: 20, color: INK };
  put(c, title, d.title, x, y, w);
  y += heightOf(c, title, d.title, w) + 10;

  // Order ids can be long (UUIDs), so that column gets most of the width.
  const cols: [string, string, number][] = [
    ['NR. COMANDĂ', d.orderId, 0.5],
    ['PRODUS', PRODUCT_NAMES_RO[d.product] ?? d.product, 0.2],
    ['EMIS LA', d.issuedAt, 0.3],
  ];
  let cx = x;
  let tallest = 0;
  for (const [label, value, share] of cols) {
    const cw = w * share - 8;
    put(c, CAPTION, label, cx, y, cw);
    put(c, STRONG, value, cx, y + 12, cw);
    tallest = Math.max(tallest, 12 + heightOf(c, STRONG, value, cw));
    cx += w * share;
  }
  y += tallest + 12;
  rule(c, x, y, w, 1, BRAND);
  return y + 16;
}

function drawParties(c: Canvas, d: PolicyDocument, x: number, y: number, w: number): number {
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
    lines.reduce((h, [style, text]) => h + heightOf(c, style, text, inner) + 3, 0);
  const boxH = pad + 16 + Math.max(...boxes.map(([, lines]) => bodyHeight(lines))) + 8;
  y = ensureRoom(c, y, boxH);

  boxes.forEach(([heading, lines], i) => {
    const bx = x + i * (bw + gap);
    c.doc.roundedRect(bx, y, bw, boxH, 4, { stroke: RULE, width: 0.75 });
    put(c, SECTION, heading, bx + pad, y + pad, inner);
    let ly = y + pad + 16;
    for (const [style, text] of lines) {
      put(c, style, text, bx + pad, ly, inner);
      ly += heightOf(c, style, text, inner) + 3;
    }
  });
  return y + boxH + 20;
}

function drawFields(c: Canvas, fields: PolicyField[], x: number, y: number, w: number): number {
  if (fields.length === 0) return y;
  y = ensureRoom(c, y, 40);
  put(c, SECTION, 'DETALII POLIȚĂ', x, y, w);
  y += 16;

  const labelW = w * 0.38 - 2 * CELL_PAD;
  const valueX = x + w * 0.38 + CELL_PAD;
  const valueW = w * 0.62 - 2 * CELL_PAD;
  fields.forEach((field, i) => {
    // A blank cell reads like a rendering fault on paper, so show a dash instead.
    const value = field.value === '' ? '—' : field.value;
    const rowH =
      Math.max(heightOf(c, CELL_LABEL, field.label, labelW), heightOf(c, CELL_VALUE, value, valueW)) +
      2 * CELL_PAD;
    y = ensureRoom(c, y, rowH);
    // Fill before the rules so the zebra band never paints over a row's border.
    if (i % 2 === 1) c.doc.rect(x, y, w, rowH, { fill: ZEBRA });
    rule(c, x, y, w);
    put(c, CELL_LABEL, field.label, x + CELL_PAD, y + CELL_PAD, labelW);
    put(c, CELL_VALUE, value, valueX, y + CELL_PAD, valueW);
    y += rowH;
    rule(c, x, y, w);
  });
  return y + 20;
}

function periodText(start?: string, end?: string): string | undefined {
  if (start && end) return `${start} – ${end}`;
  if (start) return `din ${start}`;
  if (end) return `până la ${end}`;
  return undefined;
}

function drawTotals(c: Canvas, d: PolicyDocument, x: number, y: number, w: number): number {
  const period = periodText(d.startDate, d.endDate);
  const periodStyle: Style = { font: 'bold', size: 12, color: INK };
  const priceStyle: Style = { font: 'bold', size: 18, color: BRAND, align: 'right' };
  const half = (w - 32) / 2;
  const valueH = Math.max(
    period ? heightOf(c, periodStyle, period, half) : 0,
    heightOf(c, priceStyle, d.price, half),
  );
  const boxH = 16 + 14 + valueH + 14;
  y = ensureRoom(c, y, boxH);
  c.doc.roundedRect(x, y, w, boxH, 4, { fill: TINT });
  const rightX = x + w - 16 - half;
  if (period) {
    put(c, CAPTION, 'PERIOADA DE VALABILITATE', x + 16, y + 16, half);
    put(c, periodStyle, period, x + 16, y + 32, half);
  }
  put(c, { ...CAPTION, align: 'right' }, 'TOTAL DE PLATĂ', rightX, y + 16, half);
  put(c, priceStyle, d.price, rightX, y + 28, half);
  return y + boxH + 20;
}

function drawFooters(c: Canvas, x: number, w: number, specimen: boolean): void {
  const count = c.doc.pageCount;
  for (let i = 0; i < count; i++) {
    c.doc.switchToPage(i);
    if (specimen) {
      // In the top margin of every page, above anything the body draws.
      put(c, { font: 'bold', size: 12, color: SPECIMEN }, SPECIMEN_TEXT, x, MARGIN - 34, w, PAGE_HEIGHT);
    }
    // The footer sits in the band below the body, so it may run to the page's edge.
    const fy = PAGE_HEIGHT - MARGIN - 10;
    rule(c, x, fy - 8, w);
    const note = 'Document generat electronic. Verificați valabilitatea la emitent.';
    put(c, CAPTION, note, x, fy, w * 0.8, PAGE_HEIGHT);
    put(
      c,
      { ...CAPTION, align: 'right' },
      `Pagina ${i + 1} / ${count}`,
      x + w * 0.8,
      fy,
      w * 0.2,
      PAGE_HEIGHT,
    );
  }
}

export async function renderPolicyPdf(d: PolicyDocument): Promise<Buffer> {
  const fonts = await loadFonts();
  const doc = new PdfDocument({
    width: PAGE_WIDTH,
    height: PAGE_HEIGHT,
    lang: 'ro-RO',
    info: {
      Title: d.title,
      Author: 'Polita',
      Subject: `${d.title} — ${d.orderId}`,
      Creator: 'Polita',
      Producer: 'Polita',
    },
  });
  const c: Canvas = { doc, fonts };
  const x = MARGIN;
  const w = PAGE_WIDTH - 2 * MARGIN;
  let y = MARGIN;
  y = drawHeader(c, d, x, y, w);
  y = drawParties(c, d, x, y, w);
  y = drawFields(c, d.fields, x, y, w);
  drawTotals(c, d, x, y, w);
  drawFooters(c, x, w, d.specimen === true);
  return doc.finish();
}

import { readFile } from 'node:fs/promises';
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

type FontSource = PDFKit.Mixins.PDFFontSource;

interface Fonts {
  regular: FontSource;
  bold: FontSource;
}

let fontCache: Promise<Fonts> | undefined;

/**
 * Parsing DejaVu's large GPOS/GSUB tables dominates render time (~40 ms a document when
 * every document parses the TTF again, under 10 ms when the parsed font is reused), and
 * pdfkit accepts an already-parsed fontkit font in place of a Buffer. We borrow the one a
 * throwaway document parsed; if pdfkit's internals ever change we fall back to the Buffer,
 * which is slower but renders identically.
 */
function parseOnce(file: Buffer): FontSource {
  const probe = new PDFDocument({ autoFirstPage: false });
  probe.font(file);
  const parsed = (probe as unknown as { _font?: { font?: { layout?: unknown } } })._font?.font;
  return parsed && typeof parsed.layout === 'function' ? (parsed as unknown as FontSource) : file;
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

function heightOf(doc: Doc, font: string, size: number, text: string, width: number): number {
  doc.font(font).fontSize(size);
  return doc.heightOfString(text, { width, lineGap: LINE_GAP });
}

function put(
  doc: Doc,
  font: string,
  size: number,
  color: string,
  text: string,
  x: number,
  y: number,
  width: number,
  align: 'left' | 'right' = 'left',
): void {
  doc.font(font).fontSize(size).fillColor(color).text(text, x, y, { width, align, lineGap: LINE_GAP });
}

function contentBottom(doc: Doc): number {
  return doc.page.height - doc.page.margins.bottom;
}

/** Starts a new page when `needed` points don't fit; returns the y to draw at. */
function ensureRoom(doc: Doc, y: number, needed: number): number {
  if (y + needed <= contentBottom(doc)) return y;
  doc.addPage();
  return doc.page.margins.top;
}

function drawHeader(doc: Doc, d: PolicyDocument, x: number, y: number, w: number): number {
  put(doc, BOLD, 11, BRAND, 'Polita', x, y, w);
  y += 18;
  put(doc, BOLD, 20, INK, d.title, x, y, w);
  y += heightOf(doc, BOLD, 20, d.title, w) + 10;

  // Order ids can be long (UUIDs), so that column gets most of the width.
  const cols: [string, string, number][] = [
    ['Nr. comandă', d.orderId, 0.5],
    ['Produs', d.product, 0.2],
    ['Emis la', d.issuedAt, 0.3],
  ];
  let cx = x;
  let tallest = 0;
  for (const [label, value, share] of cols) {
    const cw = w * share - 8;
    put(doc, REGULAR, 8, MUTED, label.toUpperCase(), cx, y, cw);
    put(doc, BOLD, 10, INK, value, cx, y + 12, cw);
    tallest = Math.max(tallest, 12 + heightOf(doc, BOLD, 10, value, cw));
    cx += w * share;
  }
  y += tallest + 12;
  doc
    .moveTo(x, y)
    .lineTo(x + w, y)
    .lineWidth(1)
    .strokeColor(BRAND)
    .stroke();
  return y + 16;
}

function drawParties(doc: Doc, d: PolicyDocument, x: number, y: number, w: number): number {
  const gap = 16;
  const bw = (w - gap) / 2;
  const inner = bw - 2 * 10;
  const customerLines: [string, string][] = [];
  if (d.customer.name) customerLines.push([BOLD, d.customer.name]);
  customerLines.push([REGULAR, `Telefon: ${d.customer.phone}`]);
  if (d.customer.email) customerLines.push([REGULAR, `E-mail: ${d.customer.email}`]);
  const boxes: [string, [string, string][]][] = [
    ['Asigurat / Client', customerLines],
    ['Partener', [[BOLD, d.partnerName]]],
  ];

  const bodyHeight = (lines: [string, string][]): number =>
    lines.reduce((h, [font, text]) => h + heightOf(doc, font, 10, text, inner) + 3, 0);
  const boxH = 10 + 16 + Math.max(...boxes.map(([, lines]) => bodyHeight(lines))) + 8;
  y = ensureRoom(doc, y, boxH);

  boxes.forEach(([heading, lines], i) => {
    const bx = x + i * (bw + gap);
    doc.roundedRect(bx, y, bw, boxH, 4).lineWidth(0.75).strokeColor(RULE).stroke();
    put(doc, BOLD, 9, BRAND, heading.toUpperCase(), bx + 10, y + 10, inner);
    let ly = y + 10 + 16;
    for (const [font, text] of lines) {
      put(doc, font, 10, INK, text, bx + 10, ly, inner);
      ly += heightOf(doc, font, 10, text, inner) + 3;
    }
  });
  return y + boxH + 20;
}

function drawFields(doc: Doc, fields: PolicyField[], x: number, y: number, w: number): number {
  if (fields.length === 0) return y;
  y = ensureRoom(doc, y, 40);
  put(doc, BOLD, 9, BRAND, 'DETALII POLIȚĂ', x, y, w);
  y += 16;

  const labelW = w * 0.38;
  const valueW = w - labelW;
  fields.forEach((field, i) => {
    const value = field.value === '' ? '—' : field.value;
    const rowH =
      Math.max(
        heightOf(doc, REGULAR, 9.5, field.label, labelW - 2 * CELL_PAD),
        heightOf(doc, BOLD, 9.5, value, valueW - 2 * CELL_PAD),
      ) +
      2 * CELL_PAD;
    y = ensureRoom(doc, y, rowH);
    // Fill before the rules so the zebra band never paints over a row's border.
    if (i % 2 === 1) doc.rect(x, y, w, rowH).fill(ZEBRA);
    doc
      .moveTo(x, y)
      .lineTo(x + w, y)
      .lineWidth(0.5)
      .strokeColor(RULE)
      .stroke();
    put(doc, REGULAR, 9.5, MUTED, field.label, x + CELL_PAD, y + CELL_PAD, labelW - 2 * CELL_PAD);
    put(doc, BOLD, 9.5, INK, value, x + labelW + CELL_PAD, y + CELL_PAD, valueW - 2 * CELL_PAD);
    y += rowH;
    doc
      .moveTo(x, y)
      .lineTo(x + w, y)
      .lineWidth(0.5)
      .strokeColor(RULE)
      .stroke();
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
  const half = (w - 32) / 2;
  const boxH =
    16 +
    14 +
    Math.max(period ? heightOf(doc, BOLD, 12, period, half) : 0, heightOf(doc, BOLD, 18, d.price, half)) +
    14;
  y = ensureRoom(doc, y, boxH);
  doc.roundedRect(x, y, w, boxH, 4).fill(TINT);
  const rightX = x + w - 16 - half;
  if (period) {
    put(doc, REGULAR, 8, MUTED, 'PERIOADA DE VALABILITATE', x + 16, y + 16, half);
    put(doc, BOLD, 12, INK, period, x + 16, y + 32, half);
  }
  put(doc, REGULAR, 8, MUTED, 'TOTAL DE PLATĂ', rightX, y + 16, half, 'right');
  put(doc, BOLD, 18, BRAND, d.price, rightX, y + 28, half, 'right');
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
    doc
      .moveTo(x, fy - 8)
      .lineTo(x + w, fy - 8)
      .lineWidth(0.5)
      .strokeColor(RULE)
      .stroke();
    put(
      doc,
      REGULAR,
      8,
      MUTED,
      'Document generat electronic. Verificați valabilitatea la emitent.',
      x,
      fy,
      w * 0.8,
    );
    put(doc, REGULAR, 8, MUTED, `Pagina ${i + 1} / ${range.count}`, x + w * 0.8, fy, w * 0.2, 'right');
    doc.page.margins.bottom = bottom;
  }
}

export async function renderPolicyPdf(d: PolicyDocument): Promise<Buffer> {
  const fonts = await loadFonts();
  const doc = new PDFDocument({
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
  });
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

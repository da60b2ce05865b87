import { randomBytes } from 'node:crypto';
import { deflateSync } from 'node:zlib';
import type { Font } from 'fontkit';
import LineBreaker from 'linebreak';
import { TrueTypeSubsetter } from './ttf-subset.ts';

/**
 * A small PDF writer for what a policy draws: lines of text in an embedded TrueType face (subset,
 * Identity-H, with a ToUnicode map so that the text can be copied and searched), rectangles, rounded
 * rectangles and rules, over as many A4 pages as it takes.
 *
 * It is here instead of pdfkit because a policy is rendered for every issued product, and pdfkit's
 * general text path and font embedding made the render the largest part of an order's CPU
 * (decision 0029). This writer lays text out as pdfkit did (fontkit shapes each word, with its
 * kerning and ligatures; UAX #14 line breaks; the same metrics, so a policy looks the same),
 * writes a page's content once, and embeds unhinted subsets (ttf-subset.ts).
 */

/** A chunk of text shaped by its face, in thousandths of an em. */
interface Run {
  ids: number[];
  /** Each glyph's advance in the run, kerning included. */
  advances: number[];
  /** Each glyph's own advance width, as the font's widths array gives it. */
  widths: number[];
  xOffsets: number[];
  yOffsets: number[];
  width: number;
}

/** Distinct chunks (words with their trailing space) remembered per face; past it the memo starts again. */
const LAYOUT_MEMO_WORDS = 5_000;

/** A parsed TrueType face, with its words' layouts remembered. */
export class PdfFace {
  readonly postscriptName: string;
  /** Font metrics in thousandths of an em, as PDF wants them. */
  readonly ascender: number;
  readonly descender: number;
  readonly lineGap: number;
  private readonly scale: number;
  private readonly runs = new Map<string, Run>();
  /** The code points each glyph stands for (the first text it was shaped from), for ToUnicode. */
  readonly codePoints = new Map<number, number[]>();
  readonly subsetter: TrueTypeSubsetter;
  readonly font: Font;

  /** `font` is `file` parsed by fontkit, which shapes the text; the subsets are cut from `file`. */
  constructor(font: Font, file: Buffer) {
    this.font = font;
    this.subsetter = new TrueTypeSubsetter(file);
    this.scale = 1000 / font.unitsPerEm;
    this.postscriptName = font.postscriptName.replaceAll(' ', '_');
    this.ascender = font.ascent * this.scale;
    this.descender = font.descent * this.scale;
    this.lineGap = font.lineGap * this.scale;
  }

  /** Height of a line at `size` points, the face's own line gap included (pdfkit's lineHeight(true)). */
  lineHeight(size: number): number {
    return ((this.ascender + this.lineGap - this.descender) / 1000) * size;
  }

  /** Width of `text` at `size` points. */
  widthOf(text: string, size: number): number {
    let width = 0;
    for (const run of this.layout(text)) width += run.width;
    return (width / 1000) * size;
  }

  /**
   * The text's runs: one per word with the spaces or tabs after it, as pdfkit splits text before
   * shaping it (so kerning never reaches across a space, and a word is shaped once per process).
   */
  layout(text: string): Run[] {
    const runs: Run[] = [];
    let start = 0;
    for (let i = 0; i < text.length; i++) {
      const c = text.charCodeAt(i);
      if (c === 32 || c === 9) {
        runs.push(this.run(text.slice(start, i + 1)));
        start = i + 1;
      }
    }
    if (start < text.length) runs.push(this.run(text.slice(start)));
    return runs;
  }

  private run(chunk: string): Run {
    let run = this.runs.get(chunk);
    if (run) return run;
    const shaped = this.font.layout(chunk);
    run = { ids: [], advances: [], widths: [], xOffsets: [], yOffsets: [], width: 0 };
    shaped.glyphs.forEach((glyph, i) => {
      const p = shaped.positions[i]!;
      run!.ids.push(glyph.id);
      run!.advances.push(p.xAdvance * this.scale);
      run!.widths.push(glyph.advanceWidth * this.scale);
      run!.xOffsets.push(p.xOffset * this.scale);
      run!.yOffsets.push(p.yOffset * this.scale);
      run!.width += p.xAdvance * this.scale;
      // .notdef (a character the face lacks) stands for no text of its own: see toUnicodeCmap.
      if (glyph.id !== 0 && !this.codePoints.has(glyph.id)) this.codePoints.set(glyph.id, glyph.codePoints);
    });
    if (this.runs.size >= LAYOUT_MEMO_WORDS) this.runs.clear();
    this.runs.set(chunk, run);
    return run;
  }
}

/**
 * The lines `text` takes at `size` points in `width`: pdfkit's LineWrapper for left or right
 * aligned text. Lines end at UAX #14 break opportunities (after spaces, after a hyphen) or at
 * newlines; a word wider than the line is cut where it fills it. A line keeps the spaces it ended
 * with, as pdfkit's did, and a word fits when it does with its trailing space.
 */
export function wrapText(face: PdfFace, size: number, text: string, width: number): string[] {
  if (!(width > 0)) throw new RangeError(`wrapText: the width must be above 0, got ${width}`);
  // Composed (NFC): a letter with a mark of its own (ș written as s + U+0326) becomes the face's own
  // glyph for it. Left decomposed, shaping swaps glyphs (i + U+0302 takes the dotless ı), and what a
  // reader copies comes from the glyph's first use in the process (fontkit's glyph cache), so it
  // depended on which policies the thread had rendered before.
  text = text.normalize('NFC');
  const lines: string[] = [];
  let buffer = '';
  let spaceLeft = width;
  let count = 0;
  eachWord(
    face,
    size,
    text,
    width,
    () => spaceLeft,
    (word, w, required, startsLine) => {
      if (startsLine) spaceLeft = width;
      const fits = w <= spaceLeft;
      if (fits) {
        buffer += word;
        count++;
      }
      if (!required && fits) {
        spaceLeft -= w;
        return;
      }
      if (required && !fits) {
        lines.push(buffer);
        buffer = word;
        count = 1;
      }
      lines.push(buffer);
      if (required) {
        spaceLeft = width;
        buffer = '';
        count = 0;
      } else {
        spaceLeft = width - w;
        buffer = word;
        count = 1;
      }
    },
  );
  if (count > 0) lines.push(buffer);
  // The characters UAX #14 breaks at (newlines, form feeds, line and paragraph separators) end a
  // line; they are not shown.
  return lines.map((line) => line.replace(/[\n\v\f\r\u0085\u2028\u2029]/g, ''));
}

const isHighSurrogate = (c: number): boolean => c >= 0xd800 && c <= 0xdbff;

/** pdfkit's eachWord: the text's words at their break opportunities, a word too wide for a line in pieces. */
function eachWord(
  face: PdfFace,
  size: number,
  text: string,
  lineWidth: number,
  spaceLeft: () => number,
  fn: (word: string, width: number, required: boolean, startsLine: boolean) => void,
): void {
  const breaker = new LineBreaker(text);
  let last: { position: number; required: boolean } | null = null;
  let bk;
  while ((bk = breaker.nextBreak())) {
    let word = text.slice(last?.position ?? 0, bk.position);
    let w = face.widthOf(word, size);
    if (w > lineWidth) {
      let startsLine = last === null || last.required;
      while (word.length > 0) {
        let l: number;
        let mightGrow = false;
        if (w > spaceLeft()) {
          l = Math.ceil(spaceLeft() / (w / word.length));
          w = face.widthOf(word.slice(0, l), size);
          mightGrow = w <= spaceLeft() && l < word.length;
        } else {
          l = word.length;
        }
        let mustShrink = w > spaceLeft() && l > 0;
        while (mustShrink || mightGrow) {
          if (mustShrink) {
            w = face.widthOf(word.slice(0, --l), size);
            mustShrink = w > spaceLeft() && l > 0;
          } else {
            w = face.widthOf(word.slice(0, ++l), size);
            mustShrink = w > spaceLeft() && l > 0;
            mightGrow = w <= spaceLeft() && l < word.length;
          }
        }
        if (l === 0 && spaceLeft() === lineWidth) l = 1;
        // Never between the two halves of a surrogate pair (a character beyond U+FFFF): each half
        // would show as a box and copy as U+FFFD. Back off one unit, or take the whole pair when it
        // is all the line holds, as a first character wider than the line is taken.
        if (l > 0 && l < word.length && isHighSurrogate(word.charCodeAt(l - 1))) {
          l = l > 1 ? l - 1 : l + 1;
          w = face.widthOf(word.slice(0, l), size);
        }
        fn(word.slice(0, l), w, bk.required || l < word.length, startsLine);
        startsLine = false;
        word = word.slice(l);
        w = face.widthOf(word, size);
      }
    } else {
      fn(word, w, bk.required, last === null || last.required);
    }
    last = bk;
  }
}

export type Paint = { fill: string } | { stroke: string; width: number };

/** A page's content and the graphics state it has set, so that colours are set only when they change. */
interface Page {
  ops: string[];
  fill?: string;
  stroke?: string;
  lineWidth?: number;
}

/** A face as one document uses it: the glyphs it shows, numbered in order of first use. */
interface FontUse {
  face: PdfFace;
  resource: string;
  /** A glyph id of the face → its code in the document (its index in `glyphs`), as four hex digits. */
  codes: Map<number, string>;
  /** The glyphs shown, .notdef first. */
  glyphs: number[];
}

export interface PdfOptions {
  width: number;
  height: number;
  /** The document's language (BCP 47), for screen readers. */
  lang: string;
  /** The document information dictionary: Title, Author, Subject, Creator, Producer. */
  info: Record<string, string>;
}

const KAPPA = 4 * ((Math.SQRT2 - 1) / 3);

/** A number as a content stream writes it: at most three decimals, which is a thousandth of a point. */
function num(n: number): string {
  return String(Math.round(n * 1000) / 1000);
}

const rgbMemo = new Map<string, string>();

/** '#1f4e79' → '0.122 0.306 0.475' */
function rgb(hex: string): string {
  let v = rgbMemo.get(hex);
  if (v === undefined) {
    if (!/^#[0-9a-f]{6}$/i.test(hex)) throw new Error(`not a #rrggbb colour: ${hex}`);
    const c = (i: number) => num(parseInt(hex.slice(i, i + 2), 16) / 255);
    v = `${c(1)} ${c(3)} ${c(5)}`;
    rgbMemo.set(hex, v);
  }
  return v;
}

/** A PDF text string: literal when printable ASCII, else UTF-16BE with its byte order mark. */
function pdfString(s: string): string {
  if (/^[\x20-\x7e]*$/.test(s)) return `(${s.replace(/[\\()]/g, '\\$&')})`;
  const utf16 = Buffer.from(`\ufeff${s}`, 'utf16le').swap16();
  return `<${utf16.toString('hex')}>`;
}

const hex4 = (n: number) => n.toString(16).padStart(4, '0');

/**
 * A document being drawn. Coordinates are in points from the page's top left corner, y downwards,
 * as pdfkit's are; the writer turns them into PDF's bottom-up space.
 */
export class PdfDocument {
  private readonly pages: Page[] = [];
  private page!: Page;
  private readonly fonts = new Map<PdfFace, FontUse>();
  private readonly options: PdfOptions;

  constructor(options: PdfOptions) {
    this.options = options;
    this.addPage();
  }

  get width(): number {
    return this.options.width;
  }
  get height(): number {
    return this.options.height;
  }
  get pageCount(): number {
    return this.pages.length;
  }

  addPage(): void {
    this.page = { ops: [] };
    this.pages.push(this.page);
  }

  switchToPage(index: number): void {
    const page = this.pages[index];
    if (!page) throw new Error(`no page ${index}: the document has ${this.pages.length}`);
    this.page = page;
  }

  private setFill(color: string): void {
    if (this.page.fill === color) return;
    this.page.fill = color;
    this.page.ops.push(`${rgb(color)} rg`);
  }

  private setStroke(color: string, width: number): void {
    if (this.page.stroke !== color) {
      this.page.stroke = color;
      this.page.ops.push(`${rgb(color)} RG`);
    }
    if (this.page.lineWidth !== width) {
      this.page.lineWidth = width;
      this.page.ops.push(`${num(width)} w`);
    }
  }

  /**
   * A path painted: the colour and line width first, since inside a path object (from its first
   * `m` or `re` to `f` or `S`) PDF allows only path operators (ISO 32000-1, 8.2).
   */
  private paint(path: string, paint: Paint): void {
    if ('fill' in paint) {
      this.setFill(paint.fill);
      this.page.ops.push(path, 'f');
    } else {
      this.setStroke(paint.stroke, paint.width);
      this.page.ops.push(path, 'S');
    }
  }

  /** A straight line from (x1, y1) to (x2, y2). */
  line(x1: number, y1: number, x2: number, y2: number, width: number, color: string): void {
    const h = this.height;
    this.paint(`${num(x1)} ${num(h - y1)} m ${num(x2)} ${num(h - y2)} l`, { stroke: color, width });
  }

  rect(x: number, y: number, w: number, h: number, paint: Paint): void {
    this.paint(`${num(x)} ${num(this.height - y - h)} ${num(w)} ${num(h)} re`, paint);
  }

  /** A rectangle with corners of radius `r` (Bézier quarter circles, as pdfkit draws them). */
  roundedRect(x: number, y: number, w: number, h: number, r: number, paint: Paint): void {
    r = Math.min(r, 0.5 * w, 0.5 * h);
    const c = r * (1 - KAPPA);
    const H = this.height;
    const p = (px: number, py: number) => `${num(px)} ${num(H - py)}`;
    this.paint(
      `${p(x + r, y)} m ${p(x + w - r, y)} l ${p(x + w - c, y)} ${p(x + w, y + c)} ${p(x + w, y + r)} c ` +
        `${p(x + w, y + h - r)} l ${p(x + w, y + h - c)} ${p(x + w - c, y + h)} ${p(x + w - r, y + h)} c ` +
        `${p(x + r, y + h)} l ${p(x + c, y + h)} ${p(x, y + h - c)} ${p(x, y + h - r)} c ` +
        `${p(x, y + r)} l ${p(x, y + c)} ${p(x + c, y)} ${p(x + r, y)} c h`,
      paint,
    );
  }

  /** One line of text whose line box has its top left corner at (x, y). */
  text(face: PdfFace, size: number, color: string, text: string, x: number, y: number): void {
    const runs = face.layout(text.normalize('NFC')); // as wrapText composes it
    if (runs.length === 0) return;
    const font = this.use(face);
    this.setFill(color);
    const scale = size / 1000;
    const baseline = this.height - y - face.ascender * scale;
    const ops = this.page.ops;
    ops.push(`BT /${font.resource} ${num(size)} Tf 1 0 0 1 ${num(x)} ${num(baseline)} Tm`);
    // Glyph codes in runs between kerning adjustments, as TJ takes them: [<codes> -adjust <codes>]
    let shown = '';
    let codes = '';
    let cx = x;
    let offset = false;
    const endSegment = (adjust: number) => {
      if (codes) shown += adjust === 0 ? `<${codes}>` : `<${codes}> ${num(-adjust)} `;
      codes = '';
    };
    const flush = () => {
      endSegment(0);
      if (shown) ops.push(`[${shown}] TJ`);
      shown = '';
    };
    for (const run of runs) {
      for (let i = 0; i < run.ids.length; i++) {
        const code = this.code(font, run.ids[i]!);
        const xo = run.xOffsets[i]!;
        const yo = run.yOffsets[i]!;
        if (xo || yo) {
          // A mark placed off the pen's position (a combining accent): shown from a text matrix of its own.
          flush();
          ops.push(`1 0 0 1 ${num(cx + xo * scale)} ${num(baseline + yo * scale)} Tm`);
          offset = true;
        } else if (offset) {
          flush();
          ops.push(`1 0 0 1 ${num(cx)} ${num(baseline)} Tm`);
          offset = false;
        }
        codes += code;
        const adjust = run.advances[i]! - run.widths[i]!;
        if (adjust !== 0 || xo || yo) endSegment(adjust);
        cx += run.advances[i]! * scale;
      }
    }
    flush();
    ops.push('ET');
  }

  private use(face: PdfFace): FontUse {
    let font = this.fonts.get(face);
    if (!font) {
      font = { face, resource: `F${this.fonts.size + 1}`, codes: new Map([[0, '0000']]), glyphs: [0] };
      this.fonts.set(face, font);
    }
    return font;
  }

  private code(font: FontUse, id: number): string {
    let code = font.codes.get(id);
    if (code === undefined) {
      code = hex4(font.glyphs.length);
      font.glyphs.push(id);
      font.codes.set(id, code);
    }
    return code;
  }

  /** The finished file. */
  finish(now = new Date()): Buffer {
    const objects: (string | Buffer)[] = [];
    const reserve = () => objects.push('');
    const set = (n: number, body: string | Buffer) => (objects[n - 1] = body);
    const ref = (n: number) => `${n} 0 R`;
    const stream = (dict: string, data: Uint8Array) => {
      const deflated = deflateSync(data);
      return Buffer.concat([
        Buffer.from(`<< ${dict} /Length ${deflated.length} /Filter /FlateDecode >>\nstream\n`, 'latin1'),
        deflated,
        Buffer.from('\nendstream', 'latin1'),
      ]);
    };

    const catalog = reserve();
    const pagesTree = reserve();
    const info = reserve();
    const fontRefs: string[] = [];
    for (const font of this.fonts.values()) {
      const type0 = reserve();
      fontRefs.push(`/${font.resource} ${ref(type0)}`);
      this.embed(font, type0, reserve, set, stream);
    }
    const resources = `<< /ProcSet [/PDF /Text] /Font << ${fontRefs.join(' ')} >> >>`;
    const kids: string[] = [];
    for (const page of this.pages) {
      const pageObj = reserve();
      const content = reserve();
      kids.push(ref(pageObj));
      set(
        pageObj,
        `<< /Type /Page /Parent ${ref(pagesTree)} /MediaBox [0 0 ${num(this.width)} ${num(this.height)}] ` +
          `/Contents ${ref(content)} /Resources ${resources} >>`,
      );
      set(content, stream('', Buffer.from(page.ops.join('\n'), 'latin1')));
    }
    set(pagesTree, `<< /Type /Pages /Count ${this.pages.length} /Kids [${kids.join(' ')}] >>`);
    set(
      catalog,
      `<< /Type /Catalog /Pages ${ref(pagesTree)} /Lang ${pdfString(this.options.lang)} ` +
        `/ViewerPreferences << /DisplayDocTitle true >> >>`,
    );
    const date = now.toISOString().replace(/[-:T]/g, '').slice(0, 14);
    const entries = Object.entries(this.options.info).map(([k, v]) => `/${k} ${pdfString(v)}`);
    set(info, `<< ${entries.join(' ')} /CreationDate (D:${date}Z) >>`);

    const parts: Buffer[] = [Buffer.from('%PDF-1.7\n%\xff\xff\xff\xff\n', 'latin1')];
    let at = parts[0]!.length;
    const offsets: number[] = [];
    objects.forEach((body, i) => {
      offsets.push(at);
      const part = Buffer.concat([
        Buffer.from(`${i + 1} 0 obj\n`, 'latin1'),
        typeof body === 'string' ? Buffer.from(body, 'latin1') : body,
        Buffer.from('\nendobj\n', 'latin1'),
      ]);
      parts.push(part);
      at += part.length;
    });
    const id = randomBytes(16).toString('hex');
    const xref =
      `xref\n0 ${objects.length + 1}\n0000000000 65535 f \n` +
      offsets.map((o) => `${String(o).padStart(10, '0')} 00000 n \n`).join('') +
      `trailer\n<< /Size ${objects.length + 1} /Root ${ref(catalog)} /Info ${ref(info)} /ID [<${id}> <${id}>] >>\n` +
      `startxref\n${at}\n%%EOF\n`;
    parts.push(Buffer.from(xref, 'latin1'));
    return Buffer.concat(parts);
  }

  /** The face's objects: Type0 font, CID font with its widths, descriptor, font file and ToUnicode map. */
  private embed(
    font: FontUse,
    type0: number,
    reserve: () => number,
    set: (n: number, body: string | Buffer) => void,
    stream: (dict: string, data: Uint8Array) => Buffer,
  ): void {
    const { face } = font;
    const f = face.font as Font & { 'OS/2'?: { sFamilyClass?: number }; post: { isFixedPitch?: number } };
    const cid = reserve();
    const descriptor = reserve();
    const file = reserve();
    const toUnicode = reserve();
    const { bytes } = face.subsetter.encode(font.glyphs);
    // The subset's tag: six capitals that name this subset (its face and glyphs), as PDF asks of a
    // subset's name (ISO 32000-1, 9.6.4).
    let hash = 0x811c9dc5;
    for (const id of font.glyphs) hash = Math.imul(hash ^ id, 0x01000193) >>> 0;
    for (let i = 0; i < face.postscriptName.length; i++) {
      hash = Math.imul(hash ^ face.postscriptName.charCodeAt(i), 0x01000193) >>> 0;
    }
    let tag = '';
    for (let i = 0; i < 6; i++, hash = Math.floor(hash / 26)) tag += String.fromCharCode(65 + (hash % 26));
    const name = `/${tag}+${face.postscriptName}`;

    const familyClass = (f['OS/2']?.sFamilyClass ?? 0) >> 8;
    let flags = 4; // symbolic: the glyphs are addressed by code, not by a standard encoding
    if (f.post.isFixedPitch) flags |= 1;
    if (familyClass >= 1 && familyClass <= 7) flags |= 2;
    if (familyClass === 10) flags |= 8;
    if (f.italicAngle !== 0) flags |= 64;
    const s = 1000 / f.unitsPerEm;
    const bbox = f.bbox;
    set(
      descriptor,
      `<< /Type /FontDescriptor /FontName ${name} /Flags ${flags} ` +
        `/FontBBox [${[bbox.minX, bbox.minY, bbox.maxX, bbox.maxY].map((v) => num(v * s)).join(' ')}] ` +
        `/ItalicAngle ${num(f.italicAngle)} /Ascent ${num(face.ascender)} /Descent ${num(face.descender)} ` +
        `/CapHeight ${num((f.capHeight || f.ascent) * s)} /XHeight ${num((f.xHeight || 0) * s)} /StemV 0 ` +
        `/FontFile2 ${file} 0 R >>`,
    );
    set(file, stream(`/Length1 ${bytes.length}`, bytes));
    const widths = font.glyphs.map((id) => num(f.getGlyph(id).advanceWidth * s));
    set(
      cid,
      `<< /Type /Font /Subtype /CIDFontType2 /BaseFont ${name} ` +
        `/CIDSystemInfo << /Registry (Adobe) /Ordering (Identity) /Supplement 0 >> ` +
        `/FontDescriptor ${descriptor} 0 R /W [0 [${widths.join(' ')}]] /CIDToGIDMap /Identity >>`,
    );
    set(
      toUnicode,
      stream(
        '',
        Buffer.from(
          toUnicodeCmap(
            font.glyphs.map((id) => (id === 0 ? [0xfffd] : (face.codePoints.get(id) ?? [0xfffd]))),
          ),
          'latin1',
        ),
      ),
    );
    set(
      type0,
      `<< /Type /Font /Subtype /Type0 /BaseFont ${name} /Encoding /Identity-H ` +
        `/DescendantFonts [${cid} 0 R] /ToUnicode ${toUnicode} 0 R >>`,
    );
  }
}

/**
 * The ToUnicode CMap of a subset: code i stands for `codePoints[i]` (UTF-16, as PDF wants it). Code
 * 0, .notdef, is whatever character the face lacked, so it copies as U+FFFD, the replacement
 * character, never as the first such character the process happened to meet (fontkit keeps a
 * glyph's code points from its first use).
 */
function toUnicodeCmap(codePoints: number[][]): string {
  const entries = codePoints.map((cps) => {
    const units: string[] = [];
    for (let value of cps) {
      if (value > 0xffff) {
        value -= 0x10000;
        units.push(hex4(((value >>> 10) & 0x3ff) | 0xd800));
        value = 0xdc00 | (value & 0x3ff);
      }
      units.push(hex4(value));
    }
    return `<${units.join(' ')}>`;
  });
  const ranges: string[] = [];
  for (let start = 0; start < entries.length; start += 256) {
    const end = Math.min(start + 256, entries.length);
    ranges.push(`<${hex4(start)}> <${hex4(end - 1)}> [${entries.slice(start, end).join(' ')}]`);
  }
  return `/CIDInit /ProcSet findresource begin
12 dict begin
begincmap
/CIDSystemInfo << /Registry (Adobe) /Ordering (UCS) /Supplement 0 >> def
/CMapName /Adobe-Identity-UCS def
/CMapType 2 def
1 begincodespacerange
<0000><ffff>
endcodespacerange
${ranges.length} beginbfrange
${ranges.join('\n')}
endbfrange
endcmap
CMapName currentdict /CMap defineresource pop
end
end`;
}

/**
 * TrueType subsets for PDF, their glyphs without hinting: the font program a policy embeds holds only the glyphs
 * it shows (and the components of its compound glyphs), numbered in the order they were first
 * used, as pdfkit's and fontkit's subsets were.
 *
 * Unlike theirs, the glyphs carry no hinting instructions. Hinting is bytecode that snaps outlines
 * to a screen's pixel grid at small sizes; PDF viewers either ignore it (pdf.js) or hint fonts
 * themselves, and print does not need it. In DejaVu it is well over half of a glyph's bytes, so
 * leaving it out makes every policy smaller (decision 0029). The faces' font-wide hinting tables,
 * cvt, fpgm and prep, are kept as they are: PDF asks for them whenever the original has them
 * (ISO 32000-1, 9.9), and a program that converts the font (to Type 42 for a PostScript printer)
 * may expect them.
 *
 * Everything is read from the font file's own tables; a glyph is stripped once per process.
 */

/** A glyph as a subset stores it: its bytes without instructions, and the glyphs it is made of. */
interface Stripped {
  bytes: Buffer;
  /** For a compound glyph: where in `bytes` each component's glyph id is, and that id. */
  components: { at: number; gid: number }[];
  advance: number;
  leftBearing: number;
}

/** Compound glyph component flags (OpenType 'glyf'). */
const ARG_1_AND_2_ARE_WORDS = 0x0001;
const WE_HAVE_A_SCALE = 0x0008;
const MORE_COMPONENTS = 0x0020;
const WE_HAVE_AN_X_AND_Y_SCALE = 0x0040;
const WE_HAVE_A_TWO_BY_TWO = 0x0080;
const WE_HAVE_INSTRUCTIONS = 0x0100;

/** The tables PDF asks to find in an embedded TrueType font whenever the original has them (9.9). */
const KEPT_AS_THEY_ARE = ['cvt ', 'fpgm', 'prep'];

/** head.indexToLocFormat and head.checkSumAdjustment, hhea.numberOfHMetrics, maxp.numGlyphs. */
const HEAD_INDEX_TO_LOC_FORMAT = 50;
const HEAD_CHECKSUM_ADJUSTMENT = 8;
const HHEA_NUMBER_OF_METRICS = 34;
const MAXP_NUM_GLYPHS = 4;

export class TrueTypeSubsetter {
  private readonly tables = new Map<string, Buffer>();
  private readonly locaLong: boolean;
  private readonly numGlyphs: number;
  private readonly numberOfHMetrics: number;
  private readonly stripped = new Map<number, Stripped>();
  private readonly file: Buffer;

  constructor(file: Buffer) {
    this.file = file;
    if (file.readUInt32BE(0) !== 0x00010000 && file.toString('latin1', 0, 4) !== 'true') {
      throw new Error('not a TrueType font (CFF outlines and collections are not supported)');
    }
    const count = file.readUInt16BE(4);
    for (let i = 0; i < count; i++) {
      const record = 12 + 16 * i;
      const tag = file.toString('latin1', record, record + 4);
      const offset = file.readUInt32BE(record + 8);
      const length = file.readUInt32BE(record + 12);
      this.tables.set(tag, file.subarray(offset, offset + length));
    }
    for (const tag of ['head', 'hhea', 'maxp', 'loca', 'glyf', 'hmtx']) {
      if (!this.tables.has(tag)) throw new Error(`the font has no ${tag} table`);
    }
    if (this.tables.has('fvar')) throw new Error('variable fonts are not supported');
    this.locaLong = this.table('head').readInt16BE(HEAD_INDEX_TO_LOC_FORMAT) === 1;
    this.numGlyphs = this.table('maxp').readUInt16BE(MAXP_NUM_GLYPHS);
    this.numberOfHMetrics = this.table('hhea').readUInt16BE(HHEA_NUMBER_OF_METRICS);
  }

  private table(tag: string): Buffer {
    return this.tables.get(tag)!;
  }

  /**
   * The font program of a subset: glyph `gids[i]` becomes glyph i (gids[0] should be 0, .notdef),
   * and the components of compound glyphs follow, in the order they are met. Returns the bytes and
   * the subset's glyph ids, components included.
   */
  encode(gids: readonly number[]): { bytes: Buffer; glyphs: number[] } {
    const order = [...gids];
    const index = new Map<number, number>();
    order.forEach((gid, i) => index.set(gid, i));
    const glyphs: Stripped[] = [];
    for (let i = 0; i < order.length; i++) {
      const glyph = this.glyph(order[i]!);
      glyphs.push(glyph);
      for (const c of glyph.components) {
        if (!index.has(c.gid)) {
          index.set(c.gid, order.length);
          order.push(c.gid);
        }
      }
    }

    const n = glyphs.length;
    const loca = Buffer.alloc(4 * (n + 1));
    const hmtx = Buffer.alloc(4 * n);
    let glyfLength = 0;
    glyphs.forEach((g, i) => {
      loca.writeUInt32BE(glyfLength, 4 * i);
      hmtx.writeUInt16BE(g.advance, 4 * i);
      hmtx.writeInt16BE(g.leftBearing, 4 * i + 2);
      glyfLength += g.bytes.length;
    });
    loca.writeUInt32BE(glyfLength, 4 * n);
    const glyf = Buffer.alloc(glyfLength);
    let at = 0;
    for (const g of glyphs) {
      g.bytes.copy(glyf, at);
      for (const c of g.components) glyf.writeUInt16BE(index.get(c.gid)!, at + c.at);
      at += g.bytes.length;
    }

    const head = Buffer.from(this.table('head'));
    head.writeInt16BE(1, HEAD_INDEX_TO_LOC_FORMAT);
    head.writeUInt32BE(0, HEAD_CHECKSUM_ADJUSTMENT);
    const hhea = Buffer.from(this.table('hhea'));
    hhea.writeUInt16BE(n, HHEA_NUMBER_OF_METRICS);
    const maxp = Buffer.from(this.table('maxp'));
    maxp.writeUInt16BE(n, MAXP_NUM_GLYPHS);
    const tables: [string, Buffer][] = [
      ['glyf', glyf],
      ['head', head],
      ['hhea', hhea],
      ['hmtx', hmtx],
      ['loca', loca],
      ['maxp', maxp],
    ];
    for (const tag of KEPT_AS_THEY_ARE) {
      const table = this.tables.get(tag);
      if (table) tables.push([tag, table]);
    }
    // OpenType's table directory is sorted by tag.
    const bytes = writeFont(tables.sort(([a], [b]) => (a < b ? -1 : 1)));
    return { bytes, glyphs: order };
  }

  /** Glyph `gid` without its instructions (once per process), padded to four bytes. */
  private glyph(gid: number): Stripped {
    let glyph = this.stripped.get(gid);
    if (glyph) return glyph;
    if (!Number.isInteger(gid) || gid < 0 || gid >= this.numGlyphs)
      throw new Error(`no glyph ${gid} in the font`);
    const loca = this.table('loca');
    const start = this.locaLong ? loca.readUInt32BE(4 * gid) : 2 * loca.readUInt16BE(2 * gid);
    const end = this.locaLong ? loca.readUInt32BE(4 * gid + 4) : 2 * loca.readUInt16BE(2 * gid + 2);
    const data = this.table('glyf').subarray(start, end);
    const components: Stripped['components'] = [];
    let bytes: Buffer;
    if (data.length === 0) {
      bytes = Buffer.alloc(0);
    } else if (data.readInt16BE(0) >= 0) {
      // A simple glyph: header, contour ends, instructions (dropped), then flags and coordinates,
      // up to their last byte (the file's own padding after them is not carried over).
      const contours = data.readInt16BE(0);
      const lengthAt = 10 + 2 * contours;
      const flagsAt = lengthAt + 2 + data.readUInt16BE(lengthAt);
      const end = simpleGlyphEnd(data, contours, flagsAt);
      bytes = Buffer.concat([data.subarray(0, lengthAt), Buffer.alloc(2), data.subarray(flagsAt, end)]);
    } else {
      // A compound glyph: its components, each with its flags, glyph id, offsets and transform; the
      // glyph's instructions (after the last component) are dropped and the flag announcing them cleared.
      bytes = Buffer.from(data);
      let at = 10;
      for (;;) {
        const flags = bytes.readUInt16BE(at);
        bytes.writeUInt16BE(flags & ~WE_HAVE_INSTRUCTIONS, at);
        components.push({ at: at + 2, gid: bytes.readUInt16BE(at + 2) });
        at += 4 + (flags & ARG_1_AND_2_ARE_WORDS ? 4 : 2);
        if (flags & WE_HAVE_A_SCALE) at += 2;
        else if (flags & WE_HAVE_AN_X_AND_Y_SCALE) at += 4;
        else if (flags & WE_HAVE_A_TWO_BY_TWO) at += 8;
        if (!(flags & MORE_COMPONENTS)) break;
      }
      bytes = bytes.subarray(0, at);
    }
    const padded = Buffer.alloc((bytes.length + 3) & ~3);
    bytes.copy(padded);
    const hmtx = this.table('hmtx');
    const metric = Math.min(gid, this.numberOfHMetrics - 1);
    const leftBearing =
      gid < this.numberOfHMetrics
        ? hmtx.readInt16BE(4 * gid + 2)
        : hmtx.readInt16BE(4 * this.numberOfHMetrics + 2 * (gid - this.numberOfHMetrics));
    glyph = { bytes: padded, components, advance: hmtx.readUInt16BE(4 * metric), leftBearing };
    this.stripped.set(gid, glyph);
    return glyph;
  }
}

/** Simple glyph flags (OpenType 'glyf'): the size of each point's x and y, and a repeat count. */
const X_SHORT = 0x02;
const Y_SHORT = 0x04;
const REPEAT = 0x08;
const X_SAME_OR_POSITIVE = 0x10;
const Y_SAME_OR_POSITIVE = 0x20;

/** Where a simple glyph's coordinates end: its flags read point by point from `flagsAt`. */
function simpleGlyphEnd(data: Buffer, contours: number, flagsAt: number): number {
  const points = contours === 0 ? 0 : data.readUInt16BE(10 + 2 * (contours - 1)) + 1;
  let at = flagsAt;
  let coordinates = 0;
  for (let point = 0; point < points;) {
    const flag = data.readUInt8(at++);
    const times = flag & REPEAT ? data.readUInt8(at++) + 1 : 1;
    const x = flag & X_SHORT ? 1 : flag & X_SAME_OR_POSITIVE ? 0 : 2;
    const y = flag & Y_SHORT ? 1 : flag & Y_SAME_OR_POSITIVE ? 0 : 2;
    coordinates += times * (x + y);
    point += times;
  }
  const end = at + coordinates;
  if (end > data.length) throw new Error('a glyph whose points run past its data');
  return end;
}

/** A font file of `tables` (sorted by tag), with the checksums OpenType asks for. */
function writeFont(tables: [string, Buffer][]): Buffer {
  const n = tables.length;
  const exponent = Math.floor(Math.log2(n));
  const searchRange = 2 ** exponent * 16;
  const directoryLength = 12 + 16 * n;
  let length = directoryLength;
  for (const [, data] of tables) length += (data.length + 3) & ~3;
  const out = Buffer.alloc(length);
  out.writeUInt32BE(0x00010000, 0);
  out.writeUInt16BE(n, 4);
  out.writeUInt16BE(searchRange, 6);
  out.writeUInt16BE(exponent, 8);
  out.writeUInt16BE(n * 16 - searchRange, 10);
  let at = directoryLength;
  let headAt = -1;
  tables.forEach(([tag, data], i) => {
    const record = 12 + 16 * i;
    out.write(tag, record, 'latin1');
    data.copy(out, at);
    out.writeUInt32BE(checksum(out, at, (data.length + 3) & ~3), record + 4);
    out.writeUInt32BE(at, record + 8);
    out.writeUInt32BE(data.length, record + 12);
    if (tag === 'head') headAt = at;
    at += (data.length + 3) & ~3;
  });
  out.writeUInt32BE((0xb1b0afba - checksum(out, 0, length)) >>> 0, headAt + HEAD_CHECKSUM_ADJUSTMENT);
  return out;
}

/** The OpenType checksum: the sum of the big-endian 32-bit words, modulo 2^32. */
function checksum(buf: Buffer, start: number, length: number): number {
  let sum = 0;
  for (let i = start; i < start + length; i += 4) sum = (sum + buf.readUInt32BE(i)) >>> 0;
  return sum;
}

import { readFileSync } from 'node:fs';
import { create, type Font } from 'fontkit';
import { describe, expect, it } from 'vitest';
import { TrueTypeSubsetter } from '../../src/documents/ttf-subset.ts';

const TEXTS = [
  'Poliță de asigurare RCA ăâîșț ĂÂÎȘȚ Număr de înmatriculare',
  'Жанна Ёлкина-Quixote: Zwölf Boxkämpfer jagen Viktor quer über den Sylter Deich',
  '0123456789 ,.;:!? — 1 234.56 MDL',
  // Compound glyphs (accented capitals, ligatures) pull their components into the subset.
  'ﬁ ǅ ǈ Ǆ ῼ ᾯ Ǻ ǻ',
  '',
];

/** What fontkit (2.0.4) parsed of a font and a simple glyph: internals, read here only to check them. */
interface Parsed {
  directory: { tables: Record<string, unknown> };
}
interface Decoded {
  numberOfContours: number;
  instructions?: unknown[];
}

describe('the TrueType subset writer', () => {
  for (const face of ['DejaVuSans', 'DejaVuSans-Bold']) {
    const file = readFileSync(new URL(`../../assets/fonts/${face}.ttf`, import.meta.url));
    const font = create(file) as Font;

    it(`cuts ${face}'s subsets with each glyph's outline and metrics as the face has them`, () => {
      const subsetter = new TrueTypeSubsetter(file);
      for (const text of TEXTS) {
        const used = [0, ...new Set(font.layout(text).glyphs.map((g) => g.id))];
        const { bytes, glyphs } = subsetter.encode(used);
        expect(glyphs.slice(0, used.length)).toEqual(used);
        const subset = create(bytes) as Font;
        expect(subset.numGlyphs, text).toBe(glyphs.length);
        glyphs.forEach((gid, i) => {
          const ours = subset.getGlyph(i);
          const theirs = font.getGlyph(gid);
          expect(ours.path.toSVG(), `${text}: glyph ${gid}`).toBe(theirs.path.toSVG());
          expect(ours.advanceWidth).toBe(theirs.advanceWidth);
        });
      }
    });

    it(`leaves ${face}'s glyph instructions out and writes valid checksums`, () => {
      const { bytes } = new TrueTypeSubsetter(file).encode([
        0,
        ...font.layout(TEXTS[0]!).glyphs.map((g) => g.id),
      ]);
      const subset = create(bytes) as Font;
      const tables = Object.keys((subset as unknown as Parsed).directory.tables).sort();
      // The face's cvt, fpgm and prep stay (PDF asks for them when the original has them).
      const kept = ['cvt ', 'fpgm', 'prep'].filter((t) => t in (font as unknown as Parsed).directory.tables);
      expect(kept.length).toBeGreaterThan(0);
      expect(tables).toEqual(['glyf', 'head', 'hhea', 'hmtx', 'loca', 'maxp', ...kept].sort());
      for (let i = 1; i < subset.numGlyphs; i++) {
        const glyph = (subset.getGlyph(i) as unknown as { _decode(): Decoded | null })._decode();
        if (glyph && glyph.numberOfContours >= 0) expect(glyph.instructions ?? []).toHaveLength(0);
      }
      // The whole font sums to 0xB1B0AFBA once head's checkSumAdjustment is in (OpenType 'head').
      let sum = 0;
      for (let i = 0; i < bytes.length; i += 4) sum = (sum + bytes.readUInt32BE(i)) >>> 0;
      expect(sum).toBe(0xb1b0afba);
    });
  }

  it('refuses what it was not written for: a file that is no TrueType font, a glyph the face lacks', () => {
    expect(() => new TrueTypeSubsetter(Buffer.from('OTTO\0\0\0\0'))).toThrow(/not a TrueType font/);
    const file = readFileSync(new URL('../../assets/fonts/DejaVuSans.ttf', import.meta.url));
    expect(() => new TrueTypeSubsetter(file).encode([0, 999_999])).toThrow(/no glyph 999999/);
  });
});

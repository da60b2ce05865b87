import { readFileSync } from 'node:fs';
import { create, type Font } from 'fontkit';
import { describe, expect, it } from 'vitest';
import { withFastSubset } from '../../src/documents/ttf-subset.ts';

interface Subset {
  includeGlyph(id: number): number;
  encode(): Uint8Array;
}
const subsetOf = (font: Font) => (font as unknown as { createSubset(): Subset }).createSubset();

const TEXTS = [
  'Poliță de asigurare RCA ăâîșț ĂÂÎȘȚ Număr de înmatriculare',
  'Жанна Ёлкина-Quixote: Zwölf Boxkämpfer jagen Viktor quer über den Sylter Deich',
  '0123456789 ,.;:!? — 1 234.56 MDL',
  // Compound glyphs (accented capitals, ligatures) pull their components into the subset.
  'ﬁ ǅ ǈ Ǆ ῼ ᾯ Ǻ ǻ',
  '',
];

describe('the TrueType subset writer', () => {
  for (const face of ['DejaVuSans', 'DejaVuSans-Bold']) {
    it(`writes ${face}'s subsets byte for byte as fontkit does`, () => {
      const file = readFileSync(new URL(`../../assets/fonts/${face}.ttf`, import.meta.url));
      const font = create(file) as Font;
      const fast = withFastSubset(font, file);
      expect(fast).not.toBe(font);
      for (const text of TEXTS) {
        const ours = subsetOf(fast);
        const theirs = subsetOf(font);
        for (const glyph of font.layout(text).glyphs) {
          ours.includeGlyph(glyph.id);
          theirs.includeGlyph(glyph.id);
        }
        expect(Buffer.from(ours.encode()).equals(Buffer.from(theirs.encode())), text).toBe(true);
      }
    });
  }

  it('leaves a face it was not written for as it is', () => {
    const file = readFileSync(new URL('../../assets/fonts/DejaVuSans.ttf', import.meta.url));
    const font = create(file) as Font;
    // A face whose directory names a CFF table is encoded by fontkit's CFF subset.
    const cff = Object.create(font, {
      directory: { value: { tables: { 'CFF ': { offset: 0, length: 0 } } } },
    }) as Font;
    expect(withFastSubset(cff, file)).toBe(cff);
  });
});

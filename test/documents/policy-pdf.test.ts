import { readFileSync } from 'node:fs';
import { inflateSync } from 'node:zlib';
import { create, type Font } from 'fontkit';
import { describe, expect, it } from 'vitest';
import { policyRenderer } from '../../src/documents/pdf-pool.ts';
import { renderPolicyPdf, type PolicyDocument } from '../../src/documents/policy-pdf.ts';
import { PdfFace, wrapText } from '../../src/documents/pdf-writer.ts';
import { extractText, getDocumentProxy } from 'unpdf';
import { PRODUCT_NAMES_RO } from '../../src/documents/product-names.ts';
import { CATALOGUES } from '../../src/portal/i18n.ts';
import { PRODUCT_MODULES } from '../../src/products/registry.ts';
import { extractPdfText, pdfStreams } from '../support/pdf-text.ts';

const LONG_NOTE =
  'Acoperire extinsă pentru conducătorii auto numiți în contract; franșiză zero pentru daunele ' +
  'produse pe teritoriul Republicii Moldova și în statele sistemului Carte Verde.';

const policy: PolicyDocument = {
  title: 'Poliță de asigurare RCA',
  orderId: 'ord_7f3c2e5d1a4e',
  product: 'rca',
  issuedAt: '21.11.2026 14:03',
  partnerName: 'Î.M. Țară Broker S.R.L.',
  customer: { name: 'Ștefan Țurcanu', phone: '+37369123456', email: 'stefan@example.md' },
  fields: [
    { label: 'Asigurător', value: 'Î.M. Țară Asigurări' },
    { label: 'Adresa', value: 'Chișinău, bd. Ștefan cel Mare 123' },
    { label: 'Număr de înmatriculare', value: 'ABC 123' },
    { label: 'Observații', value: LONG_NOTE },
    { label: 'Diacritice', value: 'ă â î ș ț Ă Â Î Ș Ț' },
  ],
  price: '1 234.56 MDL',
  startDate: '22.11.2026',
  endDate: '21.11.2027',
};

// Wrapped values come back split across lines, so compare them on collapsed whitespace.
const squash = (s: string): string => s.replace(/\s+/g, ' ').trim();

describe('renderPolicyPdf', () => {
  it('renders a policy again, its words and glyphs remembered, byte for byte as the first time', async () => {
    // Words and letters no other test of this file uses, so the first render shapes and strips them
    // afresh and the second takes them from the per-process memos (PdfFace, TrueTypeSubsetter).
    const fresh: PolicyDocument = {
      ...policy,
      customer: { name: 'Жанна Ёлкина-Quixote', phone: '+37369000000' },
      fields: [{ label: 'Zwölf Boxkämpfer', value: 'jagen Viktor quer über den Sylter Deich' }],
    };
    // The creation date and the file /ID (a hash of it) differ from render to render.
    const withoutDate = (pdf: Buffer) =>
      pdf
        .toString('latin1')
        .replace(/\(D:\d{14}Z\)/g, '')
        .replace(/\/ID \[<[0-9a-f]+> <[0-9a-f]+>\]/, '');
    const first = await renderPolicyPdf(fresh);
    const again = await renderPolicyPdf(fresh);
    expect(withoutDate(again)).toBe(withoutDate(first));
    expect(squash(await extractPdfText(again))).toContain('Жанна Ёлкина-Quixote');
  });

  it('renders an A4 PDF whose text, diacritics included, reads back exactly', async () => {
    const pdf = await renderPolicyPdf(policy);
    expect(pdf.subarray(0, 5).toString('latin1')).toBe('%PDF-');

    const text = await extractPdfText(pdf);
    // Pin the comma-below letters: a fallback font or a bad ToUnicode map would give
    // cedilla forms (ş ţ), NFD sequences or replacement glyphs instead.
    expect(text).toContain('\u0219');
    expect(text).toContain('\u021B');
    expect(text).toContain('\u0218');
    expect(text).toContain('\u021A');
    expect(text).not.toMatch(/[\u015F\u0163\uFFFD]/);
    expect(text).toBe(text.normalize('NFC'));

    for (const expected of [
      policy.title,
      policy.orderId,
      policy.issuedAt,
      policy.customer.phone,
      policy.customer.name ?? '',
      policy.customer.email ?? '',
      policy.partnerName,
      policy.price,
      '22.11.2026 – 21.11.2027',
      'Asigurător',
      'Chișinău',
      'Ștefan cel Mare',
      'Î.M. Țară',
      'Document generat electronic. Verificați valabilitatea la emitent.',
    ]) {
      expect(text).toContain(expected);
    }
    expect(text).not.toContain('sandbox');

    const flat = squash(text);
    for (const field of policy.fields) {
      expect(flat).toContain(field.label);
      expect(flat).toContain(squash(field.value));
    }
  });

  it('flows a long field list onto further pages and numbers them', async () => {
    const fields = Array.from({ length: 80 }, (_, i) => ({ label: `Câmp ${i}`, value: `Valoare ș ț ${i}` }));
    const text = await extractPdfText(await renderPolicyPdf({ ...policy, fields }));
    expect(text).toContain('Valoare ș ț 0');
    expect(text).toContain('Valoare ș ț 79');
    expect(text).toMatch(/Pagina 1 \/ [2-9]/);
    expect(text).toContain(policy.price);
  });

  it('marks a sandbox policy SPECIMEN — sandbox on every page, and a real one nowhere', async () => {
    const fields = Array.from({ length: 80 }, (_, i) => ({ label: `Câmp ${i}`, value: `Valoare ${i}` }));
    const proxy = await getDocumentProxy(
      new Uint8Array(await renderPolicyPdf({ ...policy, fields, specimen: true })),
    );
    const { text: pages } = await extractText(proxy, { mergePages: false });
    await proxy.destroy();
    expect(pages.length).toBeGreaterThan(1);
    for (const page of pages) expect(page).toContain('SPECIMEN — sandbox');
    expect(await extractPdfText(await renderPolicyPdf({ ...policy, fields }))).not.toContain('SPECIMEN');
  });

  it('names the product in words, as the Romanian catalogue does, never by its code', async () => {
    const text = squash(await extractPdfText(await renderPolicyPdf(policy)));
    expect(text).toContain('RCA: răspundere civilă auto (Moldova)');
    expect(text).not.toMatch(/PRODUS rca\b/);
    for (const m of PRODUCT_MODULES) {
      expect(PRODUCT_NAMES_RO[m.product], m.product).toBe(CATALOGUES.ro[`product.${m.product}`]);
    }
  });

  it('flows a field value longer than a page onto the next page, every word of it', async () => {
    const words = Array.from({ length: 900 }, (_, i) => `cuvânt${i}`);
    const text = squash(
      await extractPdfText(
        await renderPolicyPdf({ ...policy, fields: [{ label: 'Lung', value: words.join(' ') }] }),
      ),
    );
    expect(text).toContain('cuvânt0 cuvânt1');
    expect(text).toContain('cuvânt899');
    expect(text).toMatch(/Pagina 2 \/ [2-9]/);
  });

  it('shows letters written with combining marks (NFD) and reads them back', async () => {
    // Ș and Ț compose (NFC) to the face's own letters; q and x with a comma below have no composed
    // form and keep their marks.
    const nfd = 'S\u0326tefan T\u0326urcanu q\u0326x\u0326'.normalize('NFD');
    const pdf = await renderPolicyPdf({ ...policy, customer: { ...policy.customer, name: nfd } });
    const text = await extractPdfText(pdf);
    expect(text).toContain('Ștefan Țurcanu');
    expect(text.normalize('NFC')).toContain('q\u0326x\u0326');
    // Each remaining comma below is placed by the font's mark positioning, from a text matrix of its
    // own: the line of the name is a text object with more than its first Tm.
    const content = pdfStreams(pdf).find((t) => t.includes(' Tf '))!;
    const placed = content.split('ET').filter((block) => (block.match(/ Tm\n/g) ?? []).length >= 3);
    expect(placed).toHaveLength(1);
  });

  it('writes a well-formed file: every xref offset at its object, every stream its /Length, paths painted whole', async () => {
    const pdf = await renderPolicyPdf(policy);
    const text = pdf.toString('latin1');
    const startxref = Number(/startxref\n(\d+)\n%%EOF\n$/.exec(text)![1]);
    expect(text.startsWith('xref\n', startxref)).toBe(true);
    const entries = text.slice(startxref).match(/^\d{10} \d{5} [nf] \n/gm)!;
    expect(entries).toHaveLength(Number(/\/Size (\d+)/.exec(text)![1]));
    entries.slice(1).forEach((entry, i) => {
      expect(text.startsWith(`${i + 1} 0 obj\n`, Number(entry.slice(0, 10)))).toBe(true);
    });
    const streams = [...text.matchAll(/\/Length (\d+)[^>]*>>\nstream\n/g)];
    expect(streams.length).toBeGreaterThan(4);
    for (const s of streams) {
      const start = s.index + s[0].length;
      expect(text.startsWith('\nendstream', start + Number(s[1]))).toBe(true);
      const data = inflateSync(pdf.subarray(start, start + Number(s[1]))).toString('latin1');
      if (!data.includes(' Tf ')) continue;
      // A page's content: the colour and line width come before a path, never inside it.
      const ops = data.split('\n');
      ops.forEach((op, j) => {
        if (/ (m|re)\b/.test(op) && !op.startsWith('BT')) expect(['f', 'S']).toContain(ops[j + 1]);
      });
    }
  });

  it('writes the title into the document information, escaped as a PDF string', async () => {
    const info = async (title: string) =>
      /\/Title (\((?:\\.|[^\\)])*\)|<[0-9a-f]+>)/.exec(
        (await renderPolicyPdf({ ...policy, title })).toString('latin1'),
      )![1]!;
    // ASCII as a literal string, its \ ( ) escaped; anything else as UTF-16BE hex with its BOM.
    expect(await info('Policy (A) \\ B)')).toBe('(Policy \\(A\\) \\\\ B\\))');
    const hex = await info('Poliță (RCA)');
    expect(Buffer.from(hex.slice(1, -1), 'hex').swap16().toString('utf16le')).toBe('\ufeffPoliță (RCA)');
  });

  it('copies the same text whatever the thread rendered before (decomposed letters are composed)', async () => {
    const nameOf = async (name: string) =>
      squash(
        await extractPdfText(await renderPolicyPdf({ ...policy, customer: { ...policy.customer, name } })),
      );
    // Left decomposed, i + U+0302 is shaped with the dotless ı: that glyph then copied as whichever
    // text reached it first in the process, "Yıldız" as "Yildiz" or "în" as "ı̂n".
    expect(await nameOf('i\u0302nmatriculare')).toContain('înmatriculare');
    expect(await nameOf('Ayşe Yıldız')).toContain('Ayşe Yıldız');
    expect(await nameOf('i\u0302nmatriculare')).toContain('înmatriculare');
  });

  it('shows a character the face lacks as the empty box, copied as U+FFFD, and no later policy inherits it', async () => {
    const missing = await renderPolicyPdf({ ...policy, fields: [{ label: 'Nume', value: 'Wang 王' }] });
    const clean = await renderPolicyPdf(policy);
    const toUnicode = (pdf: Buffer) =>
      pdfStreams(pdf)
        .filter((t) => t.includes('begincmap'))
        .join('\n');
    for (const pdf of [missing, clean]) {
      expect(toUnicode(pdf)).not.toMatch(/738b/i);
      expect(toUnicode(pdf)).toMatch(/^<0000> <[0-9a-f]{4}> \[<fffd> /m);
    }
    expect(await extractPdfText(missing)).toContain('Wang \ufffd');
  });

  it('omits the period when no dates are given and still shows the price', async () => {
    const undated: PolicyDocument = { ...policy, fields: [] };
    delete undated.startDate;
    delete undated.endDate;
    const text = await extractPdfText(await renderPolicyPdf(undated));
    expect(text).not.toContain('PERIOADA DE VALABILITATE');
    expect(text).toContain(policy.price);
    expect(text).toContain(policy.customer.phone);
  });

  it('renders on the calling thread with PDF_THREADS=0 (the renderer imported on first use)', async () => {
    const renderer = policyRenderer(0);
    const pdf = await renderer.render(policy);
    expect(pdf.subarray(0, 5).toString('latin1')).toBe('%PDF-');
    expect(squash(await extractPdfText(pdf))).toContain('Ștefan Țurcanu');
    await renderer.close();
  });

  it('renders policies handed to one PDF thread together, each with its own text', async () => {
    // The thread takes several policies before it has finished one (pdf-pool.ts): none may borrow
    // another's fields.
    const renderer = policyRenderer(1);
    try {
      const names = [
        'Ana Țurcanu',
        'Ion Ștefănescu',
        'Maria Popa',
        'Vasile Lungu',
        'Elena Rusu',
        'Petru Cazacu',
      ];
      const pdfs = await Promise.all(
        names.map((name) => renderer.render({ ...policy, customer: { ...policy.customer, name } })),
      );
      for (const [i, pdf] of pdfs.entries()) {
        const text = squash(await extractPdfText(pdf));
        expect(text).toContain(names[i]);
        for (const other of names.filter((_, j) => j !== i)) expect(text).not.toContain(other);
      }
    } finally {
      await renderer.close();
    }
  });
});

describe('wrapText', () => {
  const face = new PdfFace(
    create(readFileSync(new URL('../../assets/fonts/DejaVuSans.ttf', import.meta.url))) as Font,
    readFileSync(new URL('../../assets/fonts/DejaVuSans.ttf', import.meta.url)),
  );

  it('breaks at spaces and after hyphens, each line within the width, no word lost', () => {
    const lines = wrapText(face, 10, LONG_NOTE + ' Jean-Pierre', 150);
    expect(lines.length).toBeGreaterThan(3);
    for (const line of lines) expect(face.widthOf(line.trimEnd(), 10)).toBeLessThanOrEqual(150);
    expect(squash(lines.join(''))).toBe(squash(LONG_NOTE + ' Jean-Pierre'));
  });

  it('cuts a word wider than the line where it fills it, and breaks at newlines', () => {
    const id = 'ord_' + 'f'.repeat(120);
    const lines = wrapText(face, 10, id, 100);
    expect(lines.join('')).toBe(id);
    for (const line of lines.slice(0, -1)) {
      expect(face.widthOf(line, 10)).toBeLessThanOrEqual(100);
      expect(face.widthOf(line + 'f', 10)).toBeGreaterThan(100);
    }
    expect(wrapText(face, 10, 'unu\ndoi', 500)).toEqual(['unu', 'doi']);
    expect(wrapText(face, 10, '', 500)).toEqual([]);
    expect(() => wrapText(face, 10, 'unu', 0)).toThrow(RangeError);
  });

  it('never cuts a word between the halves of a surrogate pair', () => {
    // Old Italic (U+10300…), which the face has: a word of astral characters without break points.
    const word = Array.from({ length: 40 }, (_, i) => String.fromCodePoint(0x10300 + (i % 30))).join('');
    for (const width of [8, 16.11, 23.5, 40, 77.7]) {
      const lines = wrapText(face, 10, word, width);
      expect(lines.join('')).toBe(word);
      for (const line of lines) {
        expect(/[\ud800-\udbff]$/.test(line), `a line ends on a high surrogate at width ${width}`).toBe(
          false,
        );
      }
    }
  });
});

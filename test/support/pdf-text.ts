import { inflateSync } from 'node:zlib';
import { extractText, getDocumentProxy } from 'unpdf';

/** All pages' text, one page per chunk, joined with newlines. */
export async function extractPdfText(pdf: Buffer | Uint8Array): Promise<string> {
  // pdf.js rejects Node Buffers and may detach the array it is given, so hand it a private copy.
  const proxy = await getDocumentProxy(new Uint8Array(pdf));
  try {
    const { text } = await extractText(proxy, { mergePages: false });
    return text.join('\n');
  } finally {
    await proxy.destroy();
  }
}

/** Every stream of a PDF whose streams are all deflated (the policy writer's), inflated, as latin1 text. */
export function pdfStreams(pdf: Buffer): string[] {
  return [...pdf.toString('latin1').matchAll(/\/Length (\d+)[^>]*>>\nstream\n/g)].map((s) => {
    const start = s.index + s[0].length;
    return inflateSync(pdf.subarray(start, start + Number(s[1]))).toString('latin1');
  });
}

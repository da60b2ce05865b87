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

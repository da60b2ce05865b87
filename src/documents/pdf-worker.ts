import { renderPolicyPdf, type PolicyDocument } from './policy-pdf.ts';

/** A pdf-pool thread: renders one policy and hands its bytes back (moved, not copied). */
export default async function render(d: PolicyDocument): Promise<Uint8Array> {
  return renderPolicyPdf(d);
}

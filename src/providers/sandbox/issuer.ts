import { createHash } from 'node:crypto';
import { ProviderRejection, type IssueReceipt, type IssueRequest, type Issuer } from '../types.ts';
import { FAILING_CERTIFICATE, TEST_VEHICLES } from './vehicles.ts';

const FAILING_PLATE = TEST_VEHICLES.find((v) => v.certificate === FAILING_CERTIFICATE)!.plate;

/**
 * Sandbox insurers and vignette registries. A purchase is idempotent per order item (a retried
 * issuance gets the same numbers back, as real registries do for a repeated request id), and
 * every purchase for the test vehicle 100000010 (plate ERR010) is refused.
 */
export class SandboxIssuer implements Issuer {
  async issue(req: IssueRequest): Promise<IssueReceipt> {
    if (req.vehicle === FAILING_CERTIFICATE || req.plate?.replace(/\s/g, '') === FAILING_PLATE) {
      throw new ProviderRejection(`the ${req.product} provider refused the vehicle (sandbox test vehicle)`);
    }
    const digest = createHash('sha256').update(`${req.orderId}/${req.idx}/${req.product}`).digest();
    const digits = (from: number, n: number) =>
      Array.from(digest.subarray(from, from + n), (b) => String(b % 10)).join('');
    return { transactionId: digits(0, 12), series: `${seriesPrefix(req.product)}${digits(12, 9)}` };
  }
}

function seriesPrefix(product: string): string {
  return product
    .replace(/[^a-z]/gi, '')
    .slice(0, 3)
    .toUpperCase();
}

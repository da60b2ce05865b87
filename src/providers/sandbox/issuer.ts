import { createHash } from 'node:crypto';
import {
  CancellationRefused,
  ProviderRejection,
  type CancelRequest,
  type IssueReceipt,
  type IssueRequest,
  type Issuer,
} from '../types.ts';
import { FAILING_CERTIFICATE, NO_CANCELLATION_CERTIFICATE, TEST_VEHICLES } from './vehicles.ts';

const plateOf = (certificate: string) => TEST_VEHICLES.find((v) => v.certificate === certificate)!.plate;
const FAILING_PLATE = plateOf(FAILING_CERTIFICATE);
const NO_CANCELLATION_PLATE = plateOf(NO_CANCELLATION_CERTIFICATE);
const plain = (plate: string | undefined) => plate?.replace(/\s/g, '').toUpperCase();

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
    return receipt(req, `${req.orderId}/${req.idx}/${req.product}`);
  }

  /** Every cancellation is accepted, except those of the test vehicle 100000012 (plate CAN012). */
  async cancel(req: CancelRequest): Promise<void> {
    if (req.vehicle === NO_CANCELLATION_CERTIFICATE || plain(req.plate) === NO_CANCELLATION_PLATE) {
      throw new CancellationRefused(`the ${req.product} insurer does not cancel policies of this vehicle`);
    }
  }

  /** A re-issue is a purchase with numbers of its own, the same again for the same revision. */
  async reissue(req: IssueRequest & { revision: number }): Promise<IssueReceipt> {
    if (req.vehicle === FAILING_CERTIFICATE || plain(req.plate) === FAILING_PLATE) {
      throw new ProviderRejection(`the ${req.product} provider refused the vehicle (sandbox test vehicle)`);
    }
    return receipt(req, `${req.orderId}/${req.idx}/${req.product}/r${req.revision}`);
  }
}

function receipt(req: IssueRequest, key: string): IssueReceipt {
  const digest = createHash('sha256').update(key).digest();
  const digits = (from: number, n: number) =>
    Array.from(digest.subarray(from, from + n), (b) => String(b % 10)).join('');
  return { transactionId: digits(0, 12), series: `${seriesPrefix(req.product)}${digits(12, 9)}` };
}

function seriesPrefix(product: string): string {
  return product
    .replace(/[^a-z]/gi, '')
    .slice(0, 3)
    .toUpperCase();
}

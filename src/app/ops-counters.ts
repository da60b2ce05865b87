/** What a webhook attempt came to: the endpoint took it (2xx), refused it or did not answer, or it could not be made or recorded. */
export const WEBHOOK_OUTCOMES = ['delivered', 'failed', 'error'] as const;
export type WebhookOutcome = (typeof WEBHOOK_OUTCOMES)[number];

/** This process's webhook attempts by outcome, counted by the workers and read by the metrics. */
export class WebhookAttempts {
  private readonly counts = new Map<WebhookOutcome, number>();

  add(outcome: WebhookOutcome): void {
    this.counts.set(outcome, (this.counts.get(outcome) ?? 0) + 1);
  }

  count(outcome: WebhookOutcome): number {
    return this.counts.get(outcome) ?? 0;
  }
}

import type { FastifyReply, FastifyRequest } from 'fastify';
import { reasonBody, sendError } from './errors.ts';

/**
 * The fields of a webhook's body (docs/api-reference.md#webhooks). A webhook is signed with the
 * partner's secret as a request is, so its body must never be a valid request: the `/v1` bodies with
 * a fixed set of fields (`{}`, `{"id"}`) refuse these, where any other unknown field is ignored
 * (decision 0084).
 */
const WEBHOOK_FIELDS = ['orderId', 'status'] as const;

/** Route preValidation hook (after the body is parsed): 400 naming a webhook field the body holds. */
export function refuseWebhookFields(request: FastifyRequest, reply: FastifyReply, done: () => void): void {
  const body = request.body;
  if (body !== null && typeof body === 'object' && !Array.isArray(body)) {
    const found = WEBHOOK_FIELDS.find((f) => Object.hasOwn(body, f));
    if (found) {
      sendError(reply, reasonBody(400, `body/${found} is not a field of this request`));
      return;
    }
  }
  done();
}

import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { PartnerWithSecrets } from '../db/repos/partners.ts';
import type { PartnerDirectory } from '../app/partner-directory.ts';
import { parseSignatureHeader, SIGNATURE_HEADER, verify } from '../signature.ts';
import { sendError } from './errors.ts';
import { parseJsonBody } from './raw-body.ts';

declare module 'fastify' {
  interface FastifyRequest {
    partner: PartnerWithSecrets;
  }
}

const UNAUTHORIZED = { statusCode: 401, error: 'Unauthorized', message: 'Missing X-Hmac-Signature header' };
// One answer for every 403 cause: it must not tell a prober which part was wrong.
const FORBIDDEN = { statusCode: 403, error: 'Forbidden', message: 'Invalid signature' };

/**
 * Signature authentication of /v1: a missing header is refused before the body is read (401);
 * then the HMAC over the raw bytes is checked against the partner's valid secrets (403), and only
 * then is the body parsed and validated.
 */
export function installPartnerAuth(app: FastifyInstance, partners: PartnerDirectory): void {
  app.decorateRequest('partner', null as unknown as PartnerWithSecrets);

  app.addHook('onRequest', (request: FastifyRequest, reply: FastifyReply, done: () => void) => {
    if (request.headers[SIGNATURE_HEADER] === undefined) return sendError(reply, UNAUTHORIZED);
    done();
  });

  app.addHook('preValidation', async (request: FastifyRequest, reply: FastifyReply) => {
    const header = request.headers[SIGNATURE_HEADER];
    const parsed = typeof header === 'string' ? parseSignatureHeader(header) : null;
    if (!parsed) return sendError(reply, FORBIDDEN);
    const partner = await partners.get(parsed.partnerId);
    const body = request.rawBody ?? Buffer.alloc(0);
    if (!partner || partner.disabled || !verify(partner.secrets, body, parsed.signature)) {
      return sendError(reply, FORBIDDEN);
    }
    request.partner = partner;
    return parseJsonBody(request, reply);
  });
}

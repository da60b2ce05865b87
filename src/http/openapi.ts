import { readFileSync } from 'node:fs';
import swagger, { type SwaggerTransform } from '@fastify/swagger';
import fastifyHelmet from '@fastify/helmet';
import swaggerUi from '@fastify/swagger-ui';
import { Type } from '@sinclair/typebox';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { Services } from '../app/services.ts';
import { localDate } from '../domain/time.ts';
import { TEST_VEHICLES } from '../providers/sandbox/vehicles.ts';
import { productExamples } from './openapi-examples.ts';
import { pageHelmet } from './page-headers.ts';
import { ErrorResponse } from './schemas.ts';

/**
 * The inline style swagger-ui applies as the page loads, allowed by its hash alone: no other inline
 * style, and no inline script, runs on /docs. A new swagger-ui may apply another (the browser test
 * of /docs fails, naming the hash to put here).
 */
const SWAGGER_UI_STYLES = ["'sha256-RL3ie0nH+Lzz2YNqQN83mnU0J1ot4QL7b99vMdIX99w='"];

/** Security scheme names: the partner signature (/v1) and the operator's bearer token (/admin, /metrics). */
export const PARTNER_SCHEME = 'hmac';
export const OPERATOR_SCHEME = 'operatorToken';

type Node = Record<string, unknown>;
const isNode = (v: unknown): v is Node => typeof v === 'object' && v !== null && !Array.isArray(v);

declare global {
  /** Set on the /docs page by docs-try-it-out.js: signs a Try-it-out request to /v1 in the browser. */
  function politaSign<R>(request: R): Promise<R>;
}

/**
 * The API document (/openapi.json) and its page (/docs). OpenAPI 3.0.3, not 3.1: the code generators
 * partners use (openapi-generator, NSwag, oapi-codegen, AutoRest) read 3.0 fully and 3.1 partly or
 * not at all, so the JSON Schema the routes validate with is rewritten into 3.0's dialect for the
 * document only (toOpenapi30); the routes' own validation and serialisation are untouched.
 * Request examples carry dates counted from the service clock, added on every request.
 */
export async function registerApiDocs(app: FastifyInstance, svc: Services): Promise<void> {
  const { sandbox, publicBaseUrl } = svc.config;
  await app.register(swagger, {
    openapi: {
      openapi: '3.0.3',
      info: {
        title: 'Polita partner API',
        version: '1.0.0',
        description: apiDescription(sandbox),
        // A private B2B API: its use is governed by the partner agreement, there is no public licence.
        license: { name: 'Proprietary: use under the Polita partner agreement' },
      },
      servers: [{ url: publicBaseUrl, description: sandbox ? 'Sandbox' : 'Production' }],
      tags: [
        { name: 'partner', description: 'The partner API: signed POST requests with JSON bodies' },
        { name: 'operator', description: 'The operator API, behind the operator’s bearer token' },
        { name: 'operations', description: 'Health, readiness, metrics and the policy documents' },
      ],
      components: {
        securitySchemes: {
          [PARTNER_SCHEME]: {
            type: 'apiKey',
            in: 'header',
            name: 'X-Hmac-Signature',
            description:
              '`<partner id>:<signature>`, where the signature is the lowercase hex HMAC-SHA512 of the ' +
              'exact request body bytes, keyed with the partner secret (see "Signing requests").',
          },
          [OPERATOR_SCHEME]: {
            type: 'http',
            scheme: 'bearer',
            description: '`Authorization: Bearer <token>` with an operator token (ADMIN_TOKEN).',
          },
        },
      },
    },
    transform: describeRoute,
    transformObject: (d) => {
      if (!('openapiObject' in d))
        throw new Error('registerApiDocs builds an OpenAPI document, not Swagger 2');
      return toOpenapi30(d.openapiObject);
    },
    refResolver: { buildLocalReference: (json, _base, _frag, i) => (json.$id as string) ?? `def-${i}` },
  });

  const today = async () => localDate(await svc.clock.now());
  const days = new WeakMap<FastifyRequest, string>();
  // The page where a sandbox partner types its secret gets the console's security headers
  // (decision 0049): it loads only what the service serves, calls only the service, and no frame
  // may hold it. In a scope of its own, so that the headers reach the page and its files only.
  await app.register(async (scope) => {
    await scope.register(fastifyHelmet, pageHelmet([new URL(publicBaseUrl).origin], SWAGGER_UI_STYLES));
    await scope.register(swaggerUi, {
      routePrefix: '/docs',
      uiConfig: sandbox
        ? {
            // Defers to the script the page loads (docs-try-it-out.js), which signs /v1 requests.
            requestInterceptor: (request) => globalThis.politaSign(request),
          }
        : // Outside the sandbox the page only reads: no request leaves it.
          { supportedSubmitMethods: [] },
      theme: sandbox
        ? {
            title: 'Polita API (sandbox)',
            js: [
              {
                filename: 'try-it-out.js',
                content: readFileSync(new URL('./docs-try-it-out.js', import.meta.url), 'utf8'),
              },
            ],
          }
        : { title: 'Polita API' },
      uiHooks: {
        preHandler: async (req) => {
          if (req.url.endsWith('/json') || req.url.endsWith('/yaml')) days.set(req, await today());
        },
      },
      transformSpecificationClone: false,
      // The server is PUBLIC_BASE_URL, never the request's Host: a forged Host must not make the
      // page send a typed secret's signatures elsewhere.
      transformSpecification: (doc, req) => withExamples(doc, days.get(req) ?? localDate(Date.now())),
    });
  });
  app.get('/openapi.json', { schema: { hide: true } }, async () =>
    withExamples(app.swagger(), await today()),
  );
}

const error = (description: string, extra: Node = {}) => ({
  ...Type.Ref(ErrorResponse),
  description,
  ...extra,
});

/** The 200 answer of each partner route, in a sentence. */
const PARTNER_SUCCESS: Record<string, string> = {
  '/v1/get-offers': 'The offers (`[]` when none applies); medical: offers keyed by insured amount',
  '/v1/create-order': 'The draft order, priced',
  '/v1/confirm-order': 'The order, paid: issuance has started',
  '/v1/get-order': 'The order; once completed, its products with their policy PDFs',
  '/v1/pay-order-from-balance': 'The order, paid from the wallet: issuance has started',
  '/v1/cancel-order':
    'Without quote_id: the preview (the refund and a quote, or why not). With it: the refunded order',
  '/v1/correct-order':
    'Without quote_id: the preview (a quote, or why not). With it: the corrected order (vignette:eu: processing until re-issued)',
  '/v1/list-events': 'The partner’s events of the last 30 days after the cursor, oldest first',
  '/v1/resend-event': 'The event is queued to be sent again to the current webhook URL',
};

/** The 404 of each partner route that can answer one. */
const PARTNER_NOT_FOUND: Record<string, string | undefined> = {
  '/v1/get-offers': 'Vehicle not found',
  '/v1/get-balance': undefined,
  '/v1/list-events': undefined,
  '/v1/resend-event': 'Event not found: no such event of this partner',
};

/** The partner routes that answer more than the idempotency conflict with 409, or 502 (decision 0088). */
const AFTER_SALE: Record<string, string> = {
  '/v1/cancel-order': 'Cancellation quote expired: preview again',
  '/v1/correct-order': 'Correction quote expired: preview again',
};

/** The operator routes that can answer 409, and when. */
const OPERATOR_CONFLICTS: Record<string, string> = {
  'POST /admin/orders/:id/refund': 'The order is not failed or completed, or already refunded',
  'POST /admin/partners/:id/webhook-test': 'The partner has no webhook URL',
};

/** The answers of the routes outside /v1 and /admin beyond their own success schema (text, PDF, 503). */
const OPS_RESPONSES: Record<string, Node> = {
  '/readyz': { 503: error('The database is unreachable') },
  '/metrics': {
    200: {
      description: 'Prometheus text exposition format',
      content: { 'text/plain': { schema: { type: 'string' } } },
    },
    401: error('No bearer token'),
    403: error('The token is neither an operator token nor METRICS_TOKEN'),
  },
  '/files/:name': {
    200: {
      description: 'The policy PDF',
      content: { 'application/pdf': { schema: { type: 'string', format: 'binary' } } },
    },
    404: error('Document not found'),
  },
};

/** A route's own success answer (200 or 201), described; its error answers are documented per status below. */
function success(response: unknown): Node {
  if (!isNode(response)) return {};
  const status = response[201] ? 201 : 200;
  const schema = response[status];
  return isNode(schema) ? { [status]: { ...schema, description: schema.description ?? 'Done' } } : {};
}

/**
 * Per route, for the document only: the security scheme by prefix, the error answers each route can
 * give (decisions 0001, 0007, 0008), and the Idempotency-Key header of the idempotent writes.
 */
const describeRoute: SwaggerTransform = ({ schema, url, route }) => {
  if (!schema || (schema as Node).hide) return { schema, url };
  const s = { ...(schema as Node) };
  const method = String(route.method);
  const hasInput = Boolean(s.body || s.params || s.querystring);
  if (url.startsWith('/v1/')) {
    const idempotent = route.config?.idempotent === true;
    const wallet = url === '/v1/get-balance' || url === '/v1/pay-order-from-balance';
    const answers = s.response as Node | undefined;
    const status = answers?.[202] ? 202 : 200;
    const success = answers?.[status] as Node;
    const notFound = url in PARTNER_NOT_FOUND ? PARTNER_NOT_FOUND[url] : 'Order not found';
    s.security = [{ [PARTNER_SCHEME]: [] }];
    s.response = {
      [status]: { ...success, description: PARTNER_SUCCESS[url] ?? success.description },
      400: error(
        'A field failing the schema (named in `message`), a body that is not JSON or, on get-offers and the wallet, a product or wallet rule (the reason in `error`)',
      ),
      401: error(
        'No signature header; or the X-Polita-Signature timestamp is more than 300 s from the real clock (never the sandbox clock); or X-Hmac-Signature alone for a partner switched to timestamped signatures',
      ),
      403: error(
        wallet
          ? 'The signature is invalid, the partner has no wallet, or balance spending is disabled'
          : 'The signature is invalid (wrong secret or partner id, body changed after signing) or the partner is disabled',
      ),
      ...(notFound ? { 404: error(notFound) } : {}),
      ...(idempotent
        ? {
            409: error(
              AFTER_SALE[url]
                ? `\`${AFTER_SALE[url]}\` (the quote is unknown, expired, used, or the order changed since); \`Issuance in progress\`; or the Idempotency-Key was used with another body, or its first request is still running`
                : 'The Idempotency-Key was used with another body, or its first request is still running',
            ),
          }
        : {}),
      413: error('The body is larger than 64 KiB'),
      429: error(
        url === '/v1/resend-event'
          ? 'Over the partner’s requests or 60 re-sends a minute, or too many failed signatures from this address'
          : 'Over the partner’s requests a minute, or too many failed signatures from this address',
        {
          headers: { 'retry-after': Type.Integer({ description: 'Seconds to wait' }) },
        },
      ),
      500: error(
        url === '/v1/create-order' || url === '/v1/confirm-order'
          ? 'A product rule refused the order: `message` is `[API] <reason>`. Without `[API]`: an unexpected failure, with a request id'
          : 'An unexpected failure; `message` carries a request id',
      ),
      ...(AFTER_SALE[url]
        ? { 502: error('The provider refused to cancel or re-issue the policy; nothing changed') }
        : {}),
    };
    if (idempotent) {
      s.headers = Type.Object({
        'Idempotency-Key': Type.Optional(
          Type.String({
            minLength: 1,
            maxLength: 255,
            pattern: '^[\\x21-\\x7e]+$',
            description:
              'Optional. The same key with the same body within 24 h returns the first answer again, byte for byte, with `Idempotent-Replayed: true`',
          }),
        ),
      });
    }
  } else if (url.startsWith('/admin/')) {
    const conflict = OPERATOR_CONFLICTS[`${method} ${url}`];
    s.security = [{ [OPERATOR_SCHEME]: [] }];
    s.response = {
      ...success(s.response),
      ...(hasInput ? { 400: error('A field failing the schema, or a refused action, with the reason') } : {}),
      401: error('The Authorization header carries no bearer token'),
      403: error('The bearer token is not an operator token'),
      ...(url.includes('/:') ? { 404: error('Not found') } : {}),
      ...(conflict ? { 409: error(conflict) } : {}),
    };
  } else {
    s.security ??= [];
    s.response = {
      ...success(s.response),
      '4xx': error('A refused request, with the reason'),
      ...OPS_RESPONSES[url],
    };
  }
  return { schema: s, url };
};

/**
 * Rewrites what @fastify/swagger emits from the routes' JSON Schema into OpenAPI 3.0: numeric
 * exclusive bounds become boolean ones, if/then becomes prose, unions of constants become one enum,
 * and the per-product variants (oneOf on `product`) become named schemas with a discriminator mapping.
 */
export function toOpenapi30<D extends object>(doc: D): D {
  const hoisted: Node = {};
  const walk = (v: unknown): unknown => {
    if (Array.isArray(v)) return v.map(walk);
    if (!isNode(v)) return v;
    const out: Node = {};
    for (const [k, child] of Object.entries(v)) out[k] = walk(child);
    return hoistVariants(mergeConstants(describeConditions(exclusiveBounds(out))), hoisted);
  };
  const out = walk(doc);
  if (isNode(out)) {
    const components = isNode(out.components) ? out.components : (out.components = {});
    components.schemas = { ...(isNode(components.schemas) ? components.schemas : {}), ...hoisted };
  }
  // Still the document it was: every object is rewritten in place of itself, in the same dialect's terms.
  return out as D;
}

function exclusiveBounds(s: Node): Node {
  for (const [bound, limit] of [
    ['exclusiveMinimum', 'minimum'],
    ['exclusiveMaximum', 'maximum'],
  ] as const) {
    if (typeof s[bound] === 'number') {
      s[limit] = s[bound];
      s[bound] = true;
    }
  }
  return s;
}

/** `allOf: [{if: {properties: {type: {enum: [x]}}}, then: {required: [...]}}]` → a sentence in `description`. */
function describeConditions(s: Node): Node {
  if (!Array.isArray(s.allOf) || !s.allOf.some((c) => isNode(c) && 'if' in c)) return s;
  const sentences: string[] = [];
  const kept = s.allOf.filter((c) => {
    if (!isNode(c) || !isNode(c.if) || !isNode(c.then)) return true;
    const [field, test] = Object.entries((c.if.properties ?? {}) as Record<string, Node>)[0] ?? [];
    const value = (test?.enum as unknown[] | undefined)?.[0] ?? test?.const;
    const then = c.then;
    const required = Array.isArray(then.required)
      ? `${(then.required as string[]).map((f) => `\`${f}\``).join(', ')} are required`
      : `one of ${((then.anyOf ?? []) as Node[]).map((a) => `\`${(a.required as string[]).join('`, `')}\``).join(' or ')} is required`;
    sentences.push(`When \`${field}\` is \`${String(value)}\`, ${required}.`);
    return false;
  });
  const out: Node = { ...s, description: [s.description, ...sentences].filter(Boolean).join(' ') };
  if (kept.length) out.allOf = kept;
  else delete out.allOf;
  return out;
}

/** `anyOf: [{type: string, enum: [a]}, {type: string, enum: [b]}]` → `{type: string, enum: [a, b]}`. */
function mergeConstants(s: Node): Node {
  const branches = s.anyOf;
  if (!Array.isArray(branches) || branches.length === 0) return s;
  const type = (branches[0] as Node).type;
  const single = (b: unknown) =>
    isNode(b) &&
    b.type === type &&
    Array.isArray(b.enum) &&
    Object.keys(b).every((k) => k === 'type' || k === 'enum');
  if (!branches.every(single)) return s;
  const { anyOf: _, ...rest } = s;
  return { ...rest, type, enum: branches.flatMap((b) => (b as Node).enum as unknown[]) };
}

/** A oneOf of titled branches picked by `product` → `$ref`s to named schemas and a discriminator mapping. */
function hoistVariants(s: Node, schemas: Node): Node {
  const discriminator = s.discriminator as Node | undefined;
  if (!discriminator || !Array.isArray(s.oneOf)) return s;
  const property = discriminator.propertyName as string;
  const mapping: Record<string, string> = {};
  const oneOf = s.oneOf.map((branch) => {
    if (!isNode(branch) || typeof branch.title !== 'string') return branch;
    const ref = `#/components/schemas/${branch.title}`;
    schemas[branch.title] = branch;
    const values = ((branch.properties as Record<string, Node>)[property]?.enum ?? []) as string[];
    for (const value of values) mapping[value] = ref;
    return { $ref: ref };
  });
  return { ...s, oneOf, discriminator: { ...discriminator, mapping } };
}

/** The document with a working request example per product (and per endpoint), dated from `today`. */
export function withExamples<D extends object>(doc: D, today: string): D {
  const copy: D = structuredClone(doc);
  const examples = Object.entries(productExamples(today));
  const set = (path: string, named: Record<string, { summary: string; value: unknown }>) => {
    const json = [path, 'post', 'requestBody', 'content', 'application/json'].reduce<unknown>(
      (node, key) => (isNode(node) ? node[key] : undefined),
      isNode(copy) ? copy.paths : undefined,
    );
    if (isNode(json)) json.examples = named;
  };
  const named = (pick: 'quote' | 'order', summary: (product: string) => string) =>
    Object.fromEntries(
      examples.map(([p, e]) => [p.replace(':', '-'), { summary: summary(p), value: e[pick] }]),
    );
  set(
    '/v1/get-offers',
    named('quote', (p) => `Quote ${p}`),
  );
  set(
    '/v1/create-order',
    named('order', (p) => `Order ${p}, dated from ${today}`),
  );
  const order = { summary: 'An order id from create-order', value: { id: 'IAI123456ABC' } };
  set('/v1/get-order', { order });
  set('/v1/pay-order-from-balance', { order });
  set('/v1/cancel-order', {
    preview: { summary: 'Preview: what cancelling refunds', value: { id: 'IAI123456ABC' } },
    confirm: {
      summary: 'Confirm with the preview’s quote',
      value: { id: 'IAI123456ABC', quote_id: 'cq_0123456789abcdef0123456789abcdef' },
    },
  });
  set('/v1/correct-order', {
    preview: {
      summary: 'Preview a corrected plate',
      value: { id: 'MDV123456ABC', changes: { plate_number: 'B CD 5678' } },
    },
    confirm: {
      summary: 'Confirm with the preview’s quote and the same changes',
      value: {
        id: 'MDV123456ABC',
        changes: { plate_number: 'B CD 5678' },
        quote_id: 'xq_0123456789abcdef0123456789abcdef',
      },
    },
  });
  set('/v1/get-balance', { balance: { summary: 'An empty object', value: {} } });
  set('/v1/confirm-order', {
    payment: {
      summary: 'The customer’s payment of a draft (the amount is the order price)',
      value: {
        id: 'IAI123456ABC',
        payment: {
          receipt_id: 'RRN000123456',
          transaction_id: 'TX000123456',
          paid_at: Date.parse(`${today}T09:00:00Z`),
          amount: 1234.5,
          currency: 'MDL',
        },
      },
    },
  });
  return copy;
}

function apiDescription(sandbox: boolean): string {
  const vehicles = TEST_VEHICLES.map(
    (v) =>
      `| \`${v.certificate}\` | ${v.plate} | ${v.make} ${v.model} | ${v.year} | ${v.category} | ${v.fuel} | ${v.vin ?? '(none)'} | \`${v.owner.idnx}\` |`,
  );
  return `Insurance policies and road vignettes for partners. The flow: quote (\`get-offers\`), create a draft
(\`create-order\`), pay it (\`confirm-order\` with the customer's payment, or \`pay-order-from-balance\` from the
prepaid wallet), then poll \`get-order\` (or wait for the webhook) until \`completed\`: each issued product then
carries \`file\`, the URL of its policy PDF. Drafts expire at 23:59:59 (Europe/Chisinau) of their creation day.

Money is a JSON number in MDL with at most 2 decimals; dates are \`yyyy-mm-dd\` in Europe/Chisinau.
Each request schema of get-offers and create-order is a variant per \`product\`; every variant has an example.

## Signing requests

Every \`/v1\` call is a \`POST\` with a JSON body and the header \`X-Hmac-Signature: <partner id>:<signature>\`,
where the signature is the lowercase hex HMAC-SHA512 of the exact body bytes sent, keyed with the partner
secret. Serialise the body once, sign that string and send that same string: re-serialising after signing
(another key order, other whitespace) breaks the signature. A missing header answers 401; a wrong signature,
an unknown partner id or a disabled partner answers 403, without saying which.

\`\`\`js
// Node.js 20 or later
import { createHmac } from 'node:crypto';

const body = JSON.stringify({ product: 'rca', vehicle: '100000001', duration: 365, idnx: '2003000000016' });
const signature = createHmac('sha512', secret).update(body).digest('hex');
const res = await fetch(\`\${baseUrl}/v1/get-offers\`, {
  method: 'POST',
  headers: { 'Content-Type': 'application/json', 'X-Hmac-Signature': \`\${partnerId}:\${signature}\` },
  body,
});
\`\`\`

\`\`\`sh
BODY='{"product":"baggage","baggage_pcs":2}'
SIG=$(printf '%s' "$BODY" | openssl dgst -sha512 -hmac "$SECRET" | sed 's/^.* //')
curl -s "$BASE_URL/v1/get-offers" -H 'Content-Type: application/json' \\
  -H "X-Hmac-Signature: $PARTNER_ID:$SIG" --data-binary "$BODY"
\`\`\`

The timestamped form is recommended, because a captured request signed as above can be replayed at any time
and against any endpoint taking the same body: \`X-Polita-Signature: id=<partner id>,t=<Unix seconds>,v1=<hex
HMAC-SHA512(secret, "<t>.POST /v1/<endpoint>.<body>")>\`. When present it is the header checked; a \`t\` more
than 300 s from the real clock (never the sandbox clock) answers 401. A partner switched to it (by the operator, or on the portal's
Developers page) is refused with 401 when it sends \`X-Hmac-Signature\` alone. In the sandbox, the signing panel of /docs offers
both forms.

\`\`\`js
const t = Math.floor(Date.now() / 1000);
const v1 = createHmac('sha512', secret).update(\`\${t}.POST /v1/get-offers.\${body}\`).digest('hex');
// headers: { 'X-Polita-Signature': \`id=\${partnerId},t=\${t},v1=\${v1}\` }
\`\`\`

Webhooks (\`{"orderId": "...", "status": "completed"}\`) carry \`X-Hmac-Signature\` over their raw body and
\`X-Polita-Signature: t=…,v1=…,v2=…\`, where \`v2\` also covers the \`X-Polita-Event-Id\`; verify it before
trusting one, and poll \`get-order\` as the source of truth.

create-order, confirm-order and pay-order-from-balance accept an optional \`Idempotency-Key\` header: a retry
with the same key and body gets the first answer again and changes nothing.

## Errors

Every error is JSON: \`{"statusCode": 400, "error": "<reason>", "message": "<reason>"}\`.

- 4xx: the reason is in both \`error\` and \`message\`. A field failing the schema answers 400 naming it,
  for example \`body/products/0/start_date must match format "date"\`.
- create-order and confirm-order report a product rule (a date out of range, an unknown vehicle or
  company, the RO vignette rules) as **500** with \`message: "[API] <reason>"\`; get-offers reports the same
  rules as 400 (404 for an unknown vehicle).
- A 500 without \`[API]\` is an unexpected failure; its \`message\` carries only a request id (also in
  the \`X-Request-Id\` header). A write retried with its \`Idempotency-Key\` is safe.
- 429: over the rate limit; \`Retry-After\` says how many seconds to wait.

## Operator API

\`/admin\` is for the people running the service: \`Authorization: Bearer <token>\` with an operator token.
The partner signature never opens \`/admin\`, and an operator token never opens \`/v1\`.
${
  sandbox
    ? `
## Sandbox

This service is a sandbox: its providers are simulated, and the demo partner (id \`demo\`) has a funded wallet;
its secret is printed when the service starts. On the /docs page, type a partner id and secret into
"Sandbox request signing" and "Try it out" signs each request in the browser. The operator can move the
service clock (\`PUT /admin/sandbox/clock\`); the examples' dates follow it.

Test vehicles of the sandbox's MD registry (\`999999999\` is not registered: 404). \`100000010\` makes every
issuance fail; \`100000009\` has an RO vignette active until today + 5 days.

| \`vehicle\` | Plate | Make and model | Year | Category | Fuel | VIN | Owner IDNX |
|---|---|---|---|---|---|---|---|
${vehicles.join('\n')}

Valid identity numbers: IDNO \`1021600002204\`, \`1003600001232\`; IDNP \`2003000000016\`, \`2005123456783\`,
\`0990123456780\`.
`
    : ''
}`;
}

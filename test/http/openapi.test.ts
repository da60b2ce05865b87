import SwaggerParser from '@apidevtools/swagger-parser';
import { createConfig, lintFromString } from '@redocly/openapi-core';
import { runInNewContext, Script } from 'node:vm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PRODUCTS } from '../../src/products/registry.ts';
import { signatureHeader, timestampedSignatureHeader } from '../../src/signature.ts';
import { startHarness, type Harness } from '../support/harness.ts';

/**
 * /openapi.json as a partner's code generator meets it: valid OpenAPI 3.0 (swagger-parser), clean
 * under Redocly's recommended rules, every product a named variant whose example works on the
 * service clock's day; and /docs signs Try-it-out requests in the sandbox only.
 */
type Doc = Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any

let h: Harness;
beforeAll(async () => {
  h = await startHarness();
});
afterAll(() => h?.close());

const get = (harness: Harness, url: string) => harness.service.app.inject({ method: 'GET', url });
const openapi = async (harness = h): Promise<Doc> => (await get(harness, '/openapi.json')).json();
const examplesOf = (doc: Doc, path: string) =>
  Object.entries(
    doc.paths[path].post.requestBody.content['application/json'].examples as Record<string, Doc>,
  );

describe('/openapi.json', () => {
  it('is a valid OpenAPI 3.0 document (swagger-parser)', async () => {
    const doc = await openapi();
    expect(doc.openapi).toBe('3.0.3');
    await expect(SwaggerParser.validate(structuredClone(doc) as never)).resolves.toBeTruthy();
  });

  it("passes Redocly's recommended rules with no error and no warning", async () => {
    const config = await createConfig({
      extends: ['recommended'],
      rules: {
        // A private B2B API has no public licence text to link to: info.license names it Proprietary.
        'info-license-strict': 'off',
      },
    });
    const problems = await lintFromString({
      source: JSON.stringify(await openapi()),
      absoluteRef: 'openapi.json',
      config,
    });
    const found = problems.map((p) => `${p.severity} ${p.ruleId}: ${p.message} at ${p.location[0]?.pointer}`);
    expect(found).toEqual([]);
  });

  it('names its server, both security schemes, and a summary, operationId, tag and security on every operation', async () => {
    const doc = await openapi();
    expect(doc.servers).toEqual([{ url: 'http://polita.test', description: 'Sandbox' }]);
    expect(doc.components.securitySchemes.hmac).toMatchObject({
      type: 'apiKey',
      in: 'header',
      name: 'X-Hmac-Signature',
    });
    expect(doc.components.securitySchemes.operatorToken).toMatchObject({ type: 'http', scheme: 'bearer' });
    expect(doc.info.description).toContain('HMAC-SHA512');
    for (const [path, item] of Object.entries(doc.paths as Record<string, Record<string, Doc>>)) {
      for (const [method, op] of Object.entries(item)) {
        const at = `${method} ${path}`;
        expect(op.summary, at).toBeTruthy();
        expect(op.operationId, at).toBeTruthy();
        expect(op.tags, at).toHaveLength(1);
        const expected = path.startsWith('/v1/')
          ? [{ hmac: [] }]
          : path.startsWith('/admin/') || path === '/metrics'
            ? [{ operatorToken: [] }]
            : [];
        expect(op.security, at).toEqual(expected);
      }
    }
  });

  it('describes each product as a named variant picked by `product`', async () => {
    const doc = await openapi();
    const quote = doc.paths['/v1/get-offers'].post.requestBody.content['application/json'].schema;
    const item =
      doc.paths['/v1/create-order'].post.requestBody.content['application/json'].schema.properties.products
        .items;
    for (const [schema, kind] of [
      [quote, 'Quote'],
      [item, 'OrderItem'],
    ] as const) {
      expect(schema.discriminator.propertyName).toBe('product');
      expect(Object.keys(schema.discriminator.mapping).sort()).toEqual([...PRODUCTS].sort());
      for (const [product, ref] of Object.entries(schema.discriminator.mapping as Record<string, string>)) {
        const name = ref.replace('#/components/schemas/', '');
        expect(name.endsWith(kind)).toBe(true);
        expect(doc.components.schemas[name].properties.product.enum).toEqual([product]);
      }
    }
    expect(doc.components.schemas.VignetteRoQuote.title).toBe('VignetteRoQuote');
  });

  it('has a get-offers and a create-order example per product', async () => {
    const doc = await openapi();
    for (const path of ['/v1/get-offers', '/v1/create-order']) {
      expect(
        examplesOf(doc, path)
          .map(([name]) => name)
          .sort(),
      ).toEqual(PRODUCTS.map((p) => p.replace(':', '-')).sort());
    }
  });
});

/** Every product example, sent as it stands, answers 200: offers for the quote, a draft for the order. */
async function examplesWork(harness: Harness) {
  const doc = await openapi(harness);
  for (const [name, example] of examplesOf(doc, '/v1/get-offers')) {
    const res = await harness.call('get-offers', example.value);
    expect(res.status, `${name}: ${JSON.stringify(res.body)}`).toBe(200);
    const offers = res.body.offers as object;
    expect(Array.isArray(offers) ? offers.length : Object.keys(offers).length, name).toBeGreaterThan(0);
  }
  for (const [name, example] of examplesOf(doc, '/v1/create-order')) {
    const res = await harness.call('create-order', example.value);
    expect(res.status, `${name}: ${JSON.stringify(res.body)}`).toBe(200);
    expect(res.body.status).toBe('draft');
  }
}

describe('the examples', () => {
  it('work today', () => examplesWork(h));

  it('follow the sandbox clock', async () => {
    await h.setClock('2026-09-30T12:00:00+03:00');
    try {
      const doc = await openapi();
      const rca = examplesOf(doc, '/v1/create-order').find(([name]) => name === 'rca')![1];
      expect(rca.value.products[0].start_date).toBe('2026-10-02');
      await examplesWork(h);
    } finally {
      await h.setClock(null);
    }
  });
});

describe('/docs', () => {
  it('serves swagger-ui locally, with a Try it out that signs in the browser in the sandbox', async () => {
    const page = await get(h, '/docs/');
    expect(page.statusCode).toBe(200);
    expect(page.body).toContain('./static/swagger-ui-bundle.js');
    expect(page.body).toContain('./static/theme/try-it-out.js');
    expect(page.body).not.toMatch(/https?:\/\/(?!validator)/);
    const script = await get(h, '/docs/static/theme/try-it-out.js');
    expect(script.statusCode).toBe(200);
    expect(script.body).toContain("crypto.subtle.sign('HMAC'");
    expect(script.body).toContain('window.politaSign');
    const init = await get(h, '/docs/static/swagger-initializer.js');
    expect(init.body).toContain('requestInterceptor');
    expect(init.body).toContain('politaSign');
    expect(() => new Script(init.body)).not.toThrow(); // the serialised interceptor is valid JavaScript
    expect(init.body).not.toContain('supportedSubmitMethods');
    // The page's own copy of the document: the same, with PUBLIC_BASE_URL as its only server.
    const json = (await get(h, '/docs/json')).json();
    expect(json.servers).toEqual([{ url: 'http://polita.test', description: 'Sandbox' }]);
    expect(json.paths).toEqual((await openapi()).paths);
  });

  it("signs in the browser as a partner's code signs: the script's request is accepted", async () => {
    for (const form of ['timestamped', 'spec'] as const) await signsLikeAPartner(form);
  });

  async function signsLikeAPartner(form: 'timestamped' | 'spec') {
    const script = (await get(h, '/docs/static/theme/try-it-out.js')).body;
    const stored = JSON.stringify({ id: h.demo.id, secret: h.demo.secret, form });
    const window: Record<string, unknown> = { location: { href: 'http://polita.test/docs/' } };
    const sandbox = {
      window,
      document: { readyState: 'loading', addEventListener: () => {} },
      sessionStorage: { getItem: () => stored },
      crypto,
      TextEncoder,
      URL,
    };
    runInNewContext(script, sandbox);
    const sign = window.politaSign as (r: Doc) => Promise<Doc>;
    const body = JSON.stringify({ product: 'baggage', baggage_pcs: 2 });
    const request = await sign({ url: 'http://polita.test/v1/get-offers', body, headers: {} });
    if (form === 'spec') {
      expect(request.headers['X-Hmac-Signature']).toBe(signatureHeader(h.demo.id, h.demo.secret, body));
    } else {
      const t = /,t=(\d+),/.exec(request.headers['X-Polita-Signature'] ?? '')?.[1];
      expect(request.headers['X-Polita-Signature']).toBe(
        timestampedSignatureHeader(h.demo.id, h.demo.secret, 'get-offers', body, Number(t)),
      );
    }
    const res = await h.service.app.inject({
      method: 'POST',
      url: '/v1/get-offers',
      headers: { 'content-type': 'application/json', ...request.headers },
      payload: body,
    });
    // The demo partner requires timestamped signatures (decision 0084): a right X-Hmac-Signature
    // alone gets the 401 that only a correct HMAC reaches.
    if (form === 'spec') expect(res.json()).toMatchObject({ message: 'Timestamped signature required' });
    else expect(res.statusCode).toBe(200);
    // Operator calls are left to the page's Authorize (bearer token).
    const admin = await sign({ url: 'http://polita.test/admin/settings', headers: {} });
    expect(admin.headers).toEqual({});
  }

  it('outside the sandbox, documents the same API with Try it out disabled and no signing script', async () => {
    const prod = await startHarness({ env: { SANDBOX: 'false', ADMIN_TOKEN: 'p'.repeat(32) } });
    try {
      const init = await get(prod, '/docs/static/swagger-initializer.js');
      expect(init.body).toContain('"supportedSubmitMethods":[]');
      expect(init.body).not.toContain('politaSign');
      expect((await get(prod, '/docs/')).body).not.toContain('try-it-out.js');
      expect((await get(prod, '/docs/static/theme/try-it-out.js')).statusCode).toBe(404);
      const doc = await openapi(prod);
      expect(doc.servers).toEqual([{ url: 'http://polita.test', description: 'Production' }]);
      expect(doc.info.description).not.toContain('## Sandbox');
      expect(doc.paths['/admin/sandbox/clock']).toBeUndefined();
      await expect(SwaggerParser.validate(structuredClone(doc) as never)).resolves.toBeTruthy();
      expect((await get(prod, '/docs/json')).json().servers).toEqual(doc.servers);
    } finally {
      await prod.close();
    }
  });
});

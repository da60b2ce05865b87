import fc from 'fast-check';
import fastJson from 'fast-json-stringify';
import { describe, expect, it } from 'vitest';
import { deepFreeze } from '../../src/domain/freeze.ts';
import { compileJsonWriter } from '../../src/http/json-writer.ts';

type Schema = Record<string, unknown>;

/**
 * The medical quote's serialiser writes what fast-json-stringify (Fastify's own) writes, byte for
 * byte; test/http/get-offers-serialisation.test.ts checks the route's answers.
 */
describe('json-writer', () => {
  const Line = {
    type: 'object',
    properties: {
      text: { type: 'string' },
      status: {
        anyOf: [
          { const: 'included', type: 'string' },
          { const: 'excluded', type: 'string' },
        ],
      },
    },
    required: ['text', 'status'],
  };
  const schema: Schema = {
    type: 'object',
    properties: {
      note: { type: 'string' },
      product: { const: 'medical', type: 'string' },
      count: { type: 'integer' },
      amount: { type: 'number' },
      flag: { type: 'boolean' },
      lines: { type: 'array', items: Line },
      offers: {
        type: 'object',
        patternProperties: { '^[0-9]+$': { type: 'array', items: { $ref: 'Line' } } },
      },
    },
    required: ['product', 'count', 'lines'],
  };
  const sharedLine = { ...Line, $id: 'Line' };
  const text = fc.oneof(
    fc.string({ unit: 'grapheme' }),
    fc.string({ unit: 'binary' }), // lone surrogates, control characters
    fc.constantFrom('Grawe Carat Asigurări', 'a"b\\c', 'line\nbreak', '\u2028', 'ăâîșț ĂÂÎȘȚ'),
  );
  const line = fc.record({ text, status: fc.constantFrom('included', 'excluded'), extra: fc.anything() });
  const value = fc.record(
    {
      note: text,
      product: fc.constant('medical'),
      count: fc.oneof(fc.integer(), fc.double({ noNaN: true, noDefaultInfinity: true, min: -1e9, max: 1e9 })),
      amount: fc.oneof(fc.double({ noNaN: true }), fc.integer()),
      flag: fc.boolean(),
      lines: fc.array(line, { maxLength: 5 }),
      offers: fc.dictionary(
        fc.oneof(fc.stringMatching(/^[0-9]{1,6}$/), fc.string()),
        fc.array(line, { maxLength: 3 }),
      ),
      unlisted: fc.anything(),
    },
    { requiredKeys: ['product', 'count', 'lines'] },
  );

  it('writes any value of a schema exactly as fast-json-stringify, frozen or not, however often', () => {
    const ours = compileJsonWriter(schema, [sharedLine]);
    const theirs = fastJson(schema as never, { schema: { Line: sharedLine } as never });
    fc.assert(
      fc.property(value, (v) => {
        const expected = theirs(v);
        expect(ours(v).toString()).toBe(expected);
        const frozen = deepFreeze(structuredClone(v));
        expect(ours(frozen).toString()).toBe(expected);
        expect(ours(frozen).toString()).toBe(expected);
      }),
      { numRuns: 1000 },
    );
  });

  it('does not reuse the bytes of a frozen value whose insides can still change', () => {
    const write = compileJsonWriter(schema, [sharedLine]);
    const inner = { text: 'before', status: 'included' };
    const lines = Object.freeze([inner]);
    const v = { product: 'medical', count: 1, lines };
    expect(JSON.parse(write(v).toString()).lines[0].text).toBe('before');
    inner.text = 'after';
    expect(JSON.parse(write(v).toString()).lines[0].text).toBe('after');
  });

  it('refuses a missing required property as fast-json-stringify does', () => {
    const write = compileJsonWriter(schema, [sharedLine]);
    expect(() => write({ product: 'medical', lines: [] })).toThrow('"count" is required!');
  });

  it('refuses at compile time a schema it could not write exactly', () => {
    expect(() => compileJsonWriter({ type: 'object', properties: { a: { type: 'null' } } })).toThrow(
      /type null/,
    );
    expect(() =>
      compileJsonWriter({
        type: 'object',
        properties: { a: { anyOf: [{ type: 'string' }, { type: 'number' }] } },
      }),
    ).toThrow(/several types/);
    expect(() => compileJsonWriter({ type: 'object', additionalProperties: true })).toThrow(
      /additionalProperties/,
    );
    expect(() => compileJsonWriter({ type: 'object', allOf: [] })).toThrow(/allOf/);
    expect(() => compileJsonWriter({ $ref: 'Nowhere' })).toThrow(/unknown \$ref/);
  });
});

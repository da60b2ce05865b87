import type { FastifySchemaValidationError } from 'fastify/types/schema.js';
import { PRODUCT_MODULES } from '../products/registry.ts';

/**
 * The reason a request refused by its schema is given, in the words of the partner API's 400: the
 * first error, at its path under `dataVar` (`body/vehicle must match pattern …`). The portal's
 * sales desk validates its forms against the same schemas and shows the same words.
 */
export function schemaErrorMessage(errors: readonly FastifySchemaValidationError[], dataVar: string): string {
  const e = errors[0]!;
  const at = `${dataVar}${e.instancePath}`;
  // Ajv's discriminator error ("value of tag … must be in oneOf") names no field a partner knows.
  if (e.keyword === 'discriminator') {
    return `${at}/product must be one of: ${PRODUCT_MODULES.map((m) => m.product).join(', ')}`;
  }
  // A choice (a union of constants, or an enum) names what it accepts: "must be equal to
  // constant" told an integrator nothing.
  if (e.keyword === 'const' || e.keyword === 'enum') {
    const allowed =
      e.keyword === 'enum'
        ? (e.params.allowedValues as unknown[])
        : errors
            .filter((x) => x.keyword === 'const' && x.instancePath === e.instancePath)
            .map((x) => x.params.allowedValue as unknown);
    return `${at} must be one of: ${allowed.map((v) => String(v)).join(', ')}`;
  }
  // The operator API refuses fields it does not know; the partner API ignores them (decision 0002).
  if (e.keyword === 'additionalProperties') {
    return `${at}/${String(e.params.additionalProperty)} is not a field of this request`;
  }
  return `${at} ${e.message ?? 'is invalid'}`;
}

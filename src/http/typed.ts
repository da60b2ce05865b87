import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import {
  Type,
  type SchemaOptions,
  type Static,
  type TNull,
  type TSchema,
  type TUnion,
} from '@sinclair/typebox';
import type {
  FastifyBaseLogger,
  FastifyInstance,
  RawReplyDefaultExpression,
  RawRequestDefaultExpression,
  RawServerDefault,
} from 'fastify';
import { ErrorResponse } from './schemas.ts';

/**
 * The server as every route file sees it: TypeBox schemas type each handler's body, params,
 * querystring and reply (through @fastify/type-provider-typebox), so no handler casts its input.
 */
export type App = FastifyInstance<
  RawServerDefault,
  RawRequestDefaultExpression,
  RawReplyDefaultExpression,
  FastifyBaseLogger,
  TypeBoxTypeProvider
>;

/** A value or null (OpenAPI 3.0: `nullable: true`). */
export const Nullable = <T extends TSchema>(schema: T, options?: SchemaOptions): TUnion<[T, TNull]> =>
  Type.Union([schema, Type.Null()], options);

/** Every error answer is the shared `Error` body (errors.ts). */
export const errorResponses = { '4xx': Type.Ref(ErrorResponse), '5xx': Type.Ref(ErrorResponse) };

/** True when A and B are each assignable to the other. */
type Same<A, B> = [A] extends [B] ? ([B] extends [A] ? true : false) : false;

/**
 * A use case's answer, checked at compile time to have exactly the type of the response schema that
 * serialises it. The type provider checks a handler's return one way only, and the serialiser drops
 * a field its schema does not list: a field added to the use case but not to the schema is a type
 * error here ("An argument for 'answerAndSchemaDiffer' was not provided").
 */
export const exactly = <S extends TSchema, T>(
  _schema: S,
  answer: T,
  ..._check: Same<T, Static<S>> extends true ? [] : [answerAndSchemaDiffer: never]
): T => answer;

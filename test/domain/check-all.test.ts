import { describe, expect, it } from 'vitest';
import { checkAll, DomainError, productRule, vehicleNotFound } from '../../src/domain/errors.ts';

/**
 * checkAll runs every check of a request so the sales desk can show every refusal at once, while
 * the API answers the first refusal exactly as when each check threw in turn (issue 48).
 */
describe('checkAll', () => {
  const refuse = (reason: string) => () => {
    throw productRule(reason);
  };

  it('answers the checks’ values in order when none refuses', async () => {
    expect(
      await checkAll(
        () => 1,
        async () => 'two',
        () => undefined,
      ),
    ).toEqual([1, 'two', undefined]);
  });

  it('throws the first refusal, holding every refusal in order, nested ones flattened', async () => {
    const err = await checkAll(
      () => 1,
      refuse('a'),
      () => checkAll(refuse('b'), refuse('c')),
      refuse('d'),
    ).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(DomainError);
    expect(err).toMatchObject({ code: 'product_rule', reason: 'a', reasons: ['a', 'b', 'c', 'd'] });
  });

  it('keeps the first refusal’s code (an unknown vehicle answers 404 on get-offers)', async () => {
    const err = await checkAll(() => {
      throw vehicleNotFound();
    }, refuse('idnx is wrong')).catch((e: unknown) => e);
    expect(err).toMatchObject({
      code: 'vehicle_not_found',
      reason: 'Vehicle not found',
      reasons: ['Vehicle not found', 'idnx is wrong'],
    });
  });

  it('throws an error that is no refusal as it is, unless a refusal came first', async () => {
    const down = new Error('provider down');
    await expect(
      checkAll(
        () => 1,
        () => Promise.reject(down),
        refuse('a'),
      ),
    ).rejects.toBe(down);
    const err = await checkAll(refuse('a'), () => Promise.reject(down), refuse('b')).catch((e: unknown) => e);
    expect(err).toMatchObject({ reason: 'a', reasons: ['a'] });
  });
});

import { describe, expect, it } from 'vitest';
import { isDatabaseUnavailable, unavailableMessage } from '../../src/db/availability.ts';

/** Which failures are the database being away (decision 0050), and which stay unexpected. */
describe('isDatabaseUnavailable', () => {
  const pgError = (code: string, message = 'x') => Object.assign(new Error(message), { code });

  it.each([
    [
      'a refused connection',
      Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:5432'), {
        code: 'ECONNREFUSED',
        syscall: 'connect',
      }),
    ],
    [
      'the embedded socket gone',
      Object.assign(new Error('connect ENOENT /d/run/.s.PGSQL.5432'), { code: 'ENOENT', syscall: 'connect' }),
    ],
    ['a reset connection', Object.assign(new Error('read ECONNRESET'), { code: 'ECONNRESET' })],
    ['an administrator shutdown', pgError('57P01')],
    ['a crash shutdown', pgError('57P02')],
    ['a server starting up', pgError('57P03')],
    ['a connection failure', pgError('08006')],
    ['a full disk', pgError('53100', 'could not extend file')],
    ['too many connections', pgError('53300')],
    ['a lost session', new Error('Connection terminated unexpectedly')],
    ['a pool that could not connect in time', new Error('timeout exceeded when trying to connect')],
    ['pg-boss’s copy of an error', { code: '57P01', message: 'terminating connection' }],
    ['a cause', new Error('wrapped', { cause: pgError('08001') })],
  ])('%s is', (_what, err) => {
    expect(isDatabaseUnavailable(err)).toBe(true);
  });

  it.each([
    ['a unique violation', pgError('23505')],
    ['a syntax error', pgError('42601')],
    ['a serialization failure', pgError('40001')],
    ['a missing file', Object.assign(new Error('ENOENT: no such file'), { code: 'ENOENT', syscall: 'open' })],
    ['a plain error', new Error('boom')],
    ['nothing', undefined],
  ])('%s is not', (_what, err) => {
    expect(isDatabaseUnavailable(err)).toBe(false);
  });

  it('gives the message /v1 answers', () => {
    expect(unavailableMessage('req-1')).toBe(
      'Service temporarily unavailable: the database cannot be reached; retry (request req-1)',
    );
  });
});

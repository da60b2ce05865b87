import { describe, expect, it } from 'vitest';
import { ConfigError, loadConfig } from '../../src/config.ts';

describe('WORKERS', () => {
  it('defaults to running the job workers in the instance', () => {
    expect(loadConfig({}).workers).toBe(true);
    expect(loadConfig({ WORKERS: '' }).workers).toBe(true);
  });

  it('reads true and false like the other switches', () => {
    expect(loadConfig({ WORKERS: 'false' }).workers).toBe(false);
    expect(loadConfig({ WORKERS: '0' }).workers).toBe(false);
    expect(loadConfig({ WORKERS: 'TRUE' }).workers).toBe(true);
  });

  it('refuses anything else, naming the variable', () => {
    expect(() => loadConfig({ WORKERS: 'api' })).toThrow(ConfigError);
    expect(() => loadConfig({ WORKERS: 'api' })).toThrow('WORKERS must be true or false, got "api"');
  });
});

describe('PG_PREPARED_STATEMENTS', () => {
  it('defaults to on, reads false, and refuses anything else naming the variable', () => {
    expect(loadConfig({}).pgPreparedStatements).toBe(true);
    expect(loadConfig({ PG_PREPARED_STATEMENTS: 'false' }).pgPreparedStatements).toBe(false);
    expect(() => loadConfig({ PG_PREPARED_STATEMENTS: 'maybe' })).toThrow(
      'PG_PREPARED_STATEMENTS must be true or false, got "maybe"',
    );
  });
});

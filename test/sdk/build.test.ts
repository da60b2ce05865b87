import { execFile } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, describe, expect, it } from 'vitest';
import { generate, TYPES_FILE } from '../../scripts/sdk-types.ts';

/**
 * The published package: sdk/src/types.ts is what `npm run sdk:types` writes from the service's
 * schemas today, and the SDK builds with its own tsconfig (as `npm run build -w sdk` does) into
 * JavaScript and declarations that stand alone: no import of the service, no runtime dependency.
 */
const sdk = join(import.meta.dirname, '../../sdk');
const out = mkdtempSync(join(tmpdir(), 'polita-sdk-build-'));
afterAll(() => rmSync(out, { recursive: true, force: true }));

describe('@polita/client package', () => {
  it('has types generated from the current schemas (else run npm run sdk:types)', async () => {
    expect(readFileSync(TYPES_FILE, 'utf8'), 'sdk/src/types.ts is stale: run npm run sdk:types').toBe(
      await generate(),
    );
  });

  it('builds into a standalone ES module with declarations', { timeout: 120_000 }, async () => {
    const tsc = join(import.meta.dirname, '../../node_modules/typescript/bin/tsc');
    await promisify(execFile)(process.execPath, [tsc, '-p', join(sdk, 'tsconfig.json'), '--outDir', out]);
    const files = readdirSync(out);
    expect(files).toEqual(expect.arrayContaining(['index.js', 'index.d.ts', 'types.d.ts']));
    for (const file of files) {
      const text = readFileSync(join(out, file), 'utf8');
      const specifiers = [...text.matchAll(/(?:from|import)\s*\(?\s*['"]([^'"]+)['"]/g)].map((m) => m[1]!);
      for (const s of specifiers) expect(s, `${file} imports ${s}`).toMatch(/^(node:[a-z]+|\.\/[\w-]+\.js)$/);
    }

    const pkg = JSON.parse(readFileSync(join(sdk, 'package.json'), 'utf8'));
    expect(pkg).toMatchObject({ name: '@polita/client', type: 'module', main: './dist/index.js' });
    expect(pkg.dependencies ?? {}).toEqual({});
    expect(pkg.peerDependencies ?? {}).toEqual({});

    writeFileSync(join(out, 'package.json'), JSON.stringify({ type: 'module' }));
    const mod = await import(join(out, 'index.js'));
    expect(Object.keys(mod).sort()).toEqual(
      [
        'Polita',
        'PolitaAuthenticationError',
        'PolitaConflictError',
        'PolitaConnectionError',
        'PolitaError',
        'PolitaNotFoundError',
        'PolitaProductRuleError',
        'PolitaRateLimitError',
        'PolitaServerError',
        'PolitaTimeoutError',
        'PolitaValidationError',
        'PolitaWalletUnavailableError',
        'TERMINAL_STATUSES',
        'WaitForOrderTimeoutError',
        'WebhookVerificationError',
        'verifyWebhook',
      ].sort(),
    );
    expect(new mod.PolitaNotFoundError(404, 'Order not found', 'Order not found')).toBeInstanceOf(
      mod.PolitaError,
    );
  });
});

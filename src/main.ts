import { writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { join } from 'node:path';
import { SANDBOX_CREDENTIALS_FILE } from './app/seed-sandbox.ts';
import { banner } from './banner.ts';
import { ConfigError, loadConfig, type Config } from './config.ts';
import { EmbeddedDatabaseError } from './db/embedded-errors.ts';
import { SecretKeyError } from './secrets/secret-box.ts';
import { startService, type Service } from './service.ts';

/** `npm start`: the service on HOST:PORT; SIGTERM/SIGINT stop it gracefully. */
async function main(): Promise<void> {
  let config;
  try {
    config = loadConfig();
  } catch (err) {
    if (err instanceof ConfigError) fail(`Configuration error: ${err.message}`, 2);
    throw err;
  }
  // Before the database starts (and perhaps creates DATA_DIR): a taken port changes nothing.
  await assertPortFree(config);
  let service: Service;
  try {
    service = await startService(config);
  } catch (err) {
    if (err instanceof EmbeddedDatabaseError) fail(`Cannot start the embedded database: ${err.message}`, 1);
    if (err instanceof SecretKeyError) fail(`Cannot start: ${err.message}`, 1);
    throw err;
  }
  try {
    await service.app.listen({ port: config.port, host: config.host });
  } catch (err) {
    await service.stop();
    fail(`Cannot listen on ${config.host}:${config.port}: ${(err as Error).message}`, 1);
  }
  console.log(banner(config, service));
  if (service.demo && !config.databaseUrl) {
    // Lets `npm run call` sign as the demo partner without copying the secret by hand.
    writeFileSync(
      join(config.dataDir, SANDBOX_CREDENTIALS_FILE),
      JSON.stringify({
        id: service.demo.id,
        secret: service.demo.secret,
        url: `http://${config.host}:${config.port}`,
        ...(service.demo.owner
          ? { owner_email: service.demo.owner.email, owner_password: service.demo.owner.password }
          : {}),
      }),
      { mode: 0o600 },
    );
  }

  let stopping = false;
  const stop = (signal: string) => {
    if (stopping) return;
    stopping = true;
    service.app.log.info({ signal }, 'stopping: finishing in-flight requests and jobs, then the database');
    service.stop().then(
      () => {
        service.app.log.info('stopped');
        process.exit(0);
      },
      (err) => {
        service.app.log.error({ err }, 'stop failed');
        process.exit(1);
      },
    );
  };
  process.on('SIGTERM', () => stop('SIGTERM'));
  process.on('SIGINT', () => stop('SIGINT'));
}

function assertPortFree(config: Config): Promise<void> {
  if (config.port === 0) return Promise.resolve();
  return new Promise((resolve) => {
    const probe = createServer();
    probe.once('error', (err: NodeJS.ErrnoException) =>
      fail(
        `Cannot listen on ${config.host}:${config.port} (${err.code ?? err.message}): ` +
          (err.code === 'EADDRINUSE'
            ? 'another process uses that port. Stop it, or set PORT to a free one.'
            : 'set HOST and PORT to an address this machine can listen on.'),
        1,
      ),
    );
    probe.listen(config.port, config.host, () => probe.close(() => resolve()));
  });
}

function fail(message: string, code: number): never {
  console.error(message);
  process.exit(code);
}

main().catch((err) => {
  console.error(err instanceof Error ? err.message : err);
  process.exit(1);
});

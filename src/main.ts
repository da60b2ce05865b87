import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { ConfigError, loadConfig } from './config.ts';
import { startService } from './service.ts';

/** `npm start`: the service on HOST:PORT; SIGTERM/SIGINT stop it gracefully. */
async function main(): Promise<void> {
  let config;
  try {
    config = loadConfig();
  } catch (err) {
    if (err instanceof ConfigError) {
      console.error(`Configuration error: ${err.message}`);
      process.exit(2);
    }
    throw err;
  }
  const service = await startService(config);
  await service.app.listen({ port: config.port, host: config.host });
  const base = config.publicBaseUrl;
  const lines = [
    `Polita listening on http://${config.host}:${config.port} (database: ${service.database.engine}${config.databaseUrl ? '' : ` in ${config.dataDir}`}, sandbox: ${config.sandbox}${config.workers ? '' : ', job workers off (WORKERS=false)'})`,
    `  API docs:      ${base}/docs`,
    `  Admin token:   ${service.adminToken}`,
  ];
  if (service.demo) {
    lines.push(`  Demo partner:  id ${service.demo.id}`, `  Demo secret:   ${service.demo.secret}`);
  }
  console.log(lines.join('\n'));
  if (service.demo && !config.databaseUrl) {
    // Lets `npm run call` sign as the demo partner without copying the secret by hand.
    writeFileSync(
      join(config.dataDir, 'sandbox-credentials.json'),
      JSON.stringify({ ...service.demo, url: `http://${config.host}:${config.port}` }),
      { mode: 0o600 },
    );
  }

  let stopping = false;
  const stop = (signal: string) => {
    if (stopping) return;
    stopping = true;
    service.app.log.info({ signal }, 'stopping: finishing in-flight requests and jobs');
    service.stop().then(
      () => process.exit(0),
      (err) => {
        service.app.log.error({ err }, 'stop failed');
        process.exit(1);
      },
    );
  };
  process.on('SIGTERM', () => stop('SIGTERM'));
  process.on('SIGINT', () => stop('SIGINT'));
}

main().catch((err) => {
  console.error(err instanceof Error ? err.message : err);
  process.exit(1);
});

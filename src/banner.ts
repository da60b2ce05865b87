import type { Config } from './config.ts';
import type { Service } from './service.ts';

/**
 * What `npm start` prints once it listens. The admin token is printed in the sandbox only, where it
 * was generated and the operator needs it; outside the sandbox the operator chose it, and a log is
 * no place for it (decision 0047).
 */
export function banner(
  config: Config,
  service: Pick<Service, 'database' | 'secretKey' | 'adminToken' | 'demo'>,
): string {
  const database = service.database.embedded
    ? `embedded PostgreSQL in ${config.dataDir}`
    : `PostgreSQL at ${withoutPassword(service.database.connectionString)}`;
  const lines = [
    `Polita listening on http://${config.host}:${config.port} (sandbox: ${config.sandbox}${config.workers ? '' : ', job workers off (WORKERS=false)'})`,
    `  Database:      ${database}`,
  ];
  if (service.database.embedded)
    lines.push(`  pg_dump:       pg_dump "${service.database.connectionString}"`);
  lines.push(`  Secret key:    ${service.secretKey}`);
  lines.push(
    `  API docs:      ${config.publicBaseUrl}/docs`,
    `  Console:       ${config.publicBaseUrl}/console`,
    `  Portal:        ${config.publicBaseUrl}/portal`,
    `  Admin token:   ${config.sandbox ? service.adminToken : 'ADMIN_TOKEN (not printed outside the sandbox)'}`,
  );
  if (service.demo) {
    lines.push(`  Demo partner:  id ${service.demo.id}`, `  Demo secret:   ${service.demo.secret}`);
    if (service.demo.owner) {
      lines.push(
        `  Demo owner:    ${service.demo.owner.email} (the portal's sign-in)`,
        `  Demo password: ${service.demo.owner.password}`,
      );
    }
  }
  return lines.join('\n');
}

function withoutPassword(url: string): string {
  try {
    const u = new URL(url);
    if (u.password) u.password = '***';
    return u.toString();
  } catch {
    return 'DATABASE_URL';
  }
}

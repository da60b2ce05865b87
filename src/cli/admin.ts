import { existsSync } from 'node:fs';
import { userInfo } from 'node:os';
import { join, resolve } from 'node:path';
import { parseArgs } from 'node:util';
import pino, { type Logger } from 'pino';
import { creditPartnerWallet } from '../app/admin/credit-wallet.ts';
import { listOrdersForOperator, orderDetail } from '../app/admin/orders.ts';
import { resendOrderEvent, sendTestEvent } from '../app/deliver-webhook.ts';
import {
  changePartner,
  createPartner,
  getPartner,
  retireOldSecrets,
  rotateSecret,
} from '../app/admin/partners.ts';
import { inviteUser } from '../app/portal/invite-user.ts';
import { passwordLink } from '../app/portal/password-link.ts';
import { operatorActor, type OperatorActor } from '../app/actor.ts';
import type { Services } from '../app/services.ts';
import { ConfigError, loadConfig, type Config } from '../config.ts';
import { BackupRefused, BackupUnavailable, backupDatabase, restoreDatabase } from '../db/backup.ts';
import { openDatabase } from '../db/database.ts';
import { EmbeddedDatabaseError } from '../db/embedded-errors.ts';
import { DomainError } from '../domain/errors.ts';
import { refundOrder } from '../app/refund-order.ts';
import { changeSettings, readSettings, resetSandboxClock, setSandboxClock } from '../app/admin/settings.ts';
import {
  auditLog,
  createOperator,
  disableOperator,
  listOperators,
  rotateOperatorToken,
} from '../app/admin/operators.ts';
import { statementCsv, walletStatement } from '../app/wallet-statement.ts';
import { WEBHOOK_EVENT_TYPES, type WebhookEventType } from '../domain/order-state.ts';
import { mdlTextToBani } from '../domain/money.ts';
import { isoLocal } from '../domain/time.ts';
import { SUB_WALLETS } from '../domain/wallet.ts';
import { jobQueue, startBoss } from '../jobs/queue.ts';
import { createLogger } from '../log.ts';
import { reencryptSecrets, secureStoredSecrets } from '../secrets/at-rest.ts';
import { loadSecretKeys, SECRET_KEY_FILE } from '../secrets/keys.ts';
import { SecretKeyError } from '../secrets/secret-box.ts';
import { createServices } from '../service.ts';

/**
 * `npm run admin -- <command> [args]`: the operator use cases of /admin from a shell, on the
 * database the service uses (same environment: DATABASE_URL, DATA_DIR, SANDBOX). Prints JSON.
 * Exit codes: 0 done, 1 refused (the reason is printed), 2 could not run.
 */
const USAGE = `usage: npm run admin -- <command>

  partners create --name <name> [--webhook-url <url>] [--webhook-events <list>] [--no-wallet] [--margin-bp <n>]
                  [--require-timestamped-signature true|false]
  partners show <partner id>
  partners update <partner id> [--name <name>] [--webhook-url <url>|none] [--webhook-events <list>]
                  [--disabled true|false] [--margin-bp <n>] [--require-timestamped-signature true|false]
  partners webhook-test <partner id>   a signed test event to the partner's webhook URL, now
  partners rotate-secret <partner id>
  partners retire-old-secrets <partner id>
  partners invite <partner id> --email <email> --role owner|developer|cashier|accountant
  partners password-link <partner id> <user id>   a new set-password link for a portal user
                  a portal user; prints the invitation link (shown once, valid 72 h)
  credit <partner id> <online|promo|insurance> <amount MDL> <reference>
  orders list [--search <id, plate or phone>] [--partner <id>] [--status <status>] [--limit <n>] [--cursor <c>]
  orders show <order id>
  resend-webhook <order id>   the order's event for its status (completed, failed, refunded, expired)
  refund <order id> --reason <text>
  settings show | settings set --balance-spending-enabled true|false
  statement <partner id> --from yyyy-mm-dd --to yyyy-mm-dd [--csv]
  clock show | clock set <ISO-8601 with offset> | clock reset   (sandbox only)
  secrets re-encrypt   every stored partner secret under SECRET_KEY (after a key rotation)
  operators create --name <name> --role admin|support   an operator token (shown once)
  operators list | operators disable <operator id>
  operators rotate <operator id>   a new token for the operator (shown once); the old one stops at once
  audit [--actor <id>] [--target <id>] [--limit <n>] [--cursor <cursor>]   newest first
  backup <file>    pg_dump -Fc of the whole database, while the service runs; keep the secret key beside it
  restore <file>   into an empty DATA_DIR or database, the service stopped; refuses any other

  --webhook-events: comma-separated statuses whose events the webhook receives, always with
  completed: completed[,failed][,refunded][,expired]
  --require-timestamped-signature true: the partner's requests must carry X-Polita-Signature;
  X-Hmac-Signature alone is refused (401)`;

class UsageError extends Error {}

const { values: opt, positionals: args } = parseArgs({
  args: process.argv.slice(2),
  allowPositionals: true,
  strict: true,
  options: {
    name: { type: 'string' },
    'webhook-url': { type: 'string' },
    'webhook-events': { type: 'string' },
    'no-wallet': { type: 'boolean' },
    'margin-bp': { type: 'string' },
    disabled: { type: 'string' },
    'require-timestamped-signature': { type: 'string' },
    partner: { type: 'string' },
    status: { type: 'string' },
    limit: { type: 'string' },
    cursor: { type: 'string' },
    search: { type: 'string' },
    reason: { type: 'string' },
    role: { type: 'string' },
    email: { type: 'string' },
    actor: { type: 'string' },
    target: { type: 'string' },
    'balance-spending-enabled': { type: 'string' },
    from: { type: 'string' },
    to: { type: 'string' },
    csv: { type: 'boolean' },
    help: { type: 'boolean', short: 'h' },
  },
});

function need(value: string | undefined, what: string): string {
  if (!value) throw new UsageError(`missing ${what}`);
  return value;
}

function integer(value: string | undefined, what: string): number | undefined {
  if (value === undefined) return undefined;
  if (!/^\d+$/.test(value)) throw new UsageError(`${what} must be a whole number, got "${value}"`);
  return Number(value);
}

function eventList(value: string | undefined): { webhook_events: WebhookEventType[] } | object {
  if (value === undefined) return {};
  const list = value.split(',').map((s) => s.trim());
  const unknown = list.filter((s) => !(WEBHOOK_EVENT_TYPES as readonly string[]).includes(s));
  if (unknown.length > 0) {
    throw new UsageError(
      `--webhook-events takes ${WEBHOOK_EVENT_TYPES.join(', ')}; not ${unknown.map((s) => `"${s}"`).join(', ')}`,
    );
  }
  return { webhook_events: list as WebhookEventType[] };
}

/** The options that were given (a use case's optional fields are absent, never undefined). */
function given<T extends Record<string, string | undefined>>(o: T): { [K in keyof T]?: string } {
  return Object.fromEntries(Object.entries(o).filter(([, v]) => v !== undefined)) as {
    [K in keyof T]?: string;
  };
}

const page = () => (opt.limit ? { limit: integer(opt.limit, '--limit')! } : {});

/** An amount in MDL as typed (`250`, `99.50`), in bani: decimal text, never `1e3` or `0x10` (decision 0048). */
function baniOf(text: string): number {
  const bani = mdlTextToBani(text);
  if (bani === null)
    throw new UsageError(`amount must be MDL with at most 2 decimals, like 250 or 99.50; got "${text}"`);
  return bani;
}

function bool(value: string | undefined, what: string): boolean | undefined {
  if (value === undefined) return undefined;
  if (value === 'true' || value === 'false') return value === 'true';
  throw new UsageError(`${what} must be true or false, got "${value}"`);
}

async function run(svc: Services, actor: OperatorActor, [group, verb, ...rest]: string[]): Promise<unknown> {
  const webhook = opt['webhook-url'] === 'none' ? null : opt['webhook-url'];
  const stamped = bool(opt['require-timestamped-signature'], '--require-timestamped-signature');
  const timestamped = stamped !== undefined ? { require_timestamped_signature: stamped } : {};
  switch (
    `${group} ${['credit', 'resend-webhook', 'refund', 'statement', 'audit'].includes(group ?? '') ? '' : verb}`.trim()
  ) {
    case 'partners create':
      return createPartner(svc, actor, {
        name: need(opt.name, '--name'),
        ...(webhook !== undefined ? { webhook_url: webhook } : {}),
        ...eventList(opt['webhook-events']),
        wallet: !opt['no-wallet'],
        ...(opt['margin-bp'] !== undefined ? { margin_bp: integer(opt['margin-bp'], '--margin-bp')! } : {}),
        ...timestamped,
      });
    case 'partners show':
      return getPartner(svc, need(rest[0], 'partner id'));
    case 'partners update': {
      const patch = {
        ...(opt.name !== undefined ? { name: opt.name } : {}),
        ...(webhook !== undefined ? { webhook_url: webhook } : {}),
        ...eventList(opt['webhook-events']),
        ...(opt.disabled !== undefined ? { disabled: bool(opt.disabled, '--disabled')! } : {}),
        ...(opt['margin-bp'] !== undefined ? { margin_bp: integer(opt['margin-bp'], '--margin-bp')! } : {}),
        ...timestamped,
      };
      if (Object.keys(patch).length === 0) throw new UsageError('nothing to update');
      return changePartner(svc, actor, need(rest[0], 'partner id'), patch);
    }
    case 'partners webhook-test':
      return sendTestEvent(svc, actor, need(rest[0], 'partner id'));
    case 'partners rotate-secret':
      return rotateSecret(svc, actor, need(rest[0], 'partner id'));
    case 'partners retire-old-secrets':
      return retireOldSecrets(svc, actor, need(rest[0], 'partner id'));
    case 'partners password-link':
      return passwordLink(svc, actor, need(rest[0], 'partner id'), need(rest[1], 'user id'));
    case 'partners invite':
      return inviteUser(svc, actor, need(rest[0], 'partner id'), {
        email: need(opt.email, '--email'),
        role: need(opt.role, '--role'),
      });
    case 'credit': {
      const [partnerId, named, amount, reference] = [verb, ...rest];
      const wallet = SUB_WALLETS.find((w) => w === named);
      if (!wallet) throw new UsageError('wallet must be online, promo or insurance');
      return creditPartnerWallet(svc, actor, {
        partnerId: need(partnerId, 'partner id'),
        wallet,
        amountBani: baniOf(need(amount, 'amount')),
        reference: need(reference, 'reference'),
        actor: 'operator:cli',
      });
    }
    case 'orders list':
      return listOrdersForOperator(svc, {
        ...given({ partner_id: opt.partner, status: opt.status, q: opt.search, cursor: opt.cursor }),
        ...page(),
      });
    case 'orders show':
      return orderDetail(svc, need(rest[0], 'order id'));
    case 'resend-webhook':
      return resendOrderEvent(svc, actor, need(verb, 'order id'));
    case 'refund': {
      const id = need(verb, 'order id');
      await refundOrder(svc, actor, id, { reason: need(opt.reason, '--reason'), actor: 'operator-cli' });
      return orderDetail(svc, id);
    }
    case 'settings show':
      return readSettings(svc);
    case 'settings set':
      return changeSettings(svc, actor, {
        balance_spending_enabled: bool(
          need(opt['balance-spending-enabled'], '--balance-spending-enabled'),
          '--balance-spending-enabled',
        )!,
      });
    case 'statement': {
      const statement = await walletStatement(svc, {
        partnerId: need(verb, 'partner id'),
        from: need(opt.from, '--from'),
        to: need(opt.to, '--to'),
      });
      return opt.csv ? statementCsv(statement) : statement;
    }
    case 'operators create':
      return createOperator(svc, actor, { name: need(opt.name, '--name'), role: need(opt.role, '--role') });
    case 'operators list':
      return listOperators(svc);
    case 'operators disable':
      return disableOperator(svc, actor, need(rest[0], 'operator id'));
    case 'operators rotate':
      return rotateOperatorToken(svc, actor, need(rest[0], 'operator id'));
    case 'audit':
      return auditLog(svc, {
        ...given({ actor: opt.actor, target: opt.target, cursor: opt.cursor }),
        ...page(),
      });
    case 'secrets re-encrypt':
      return reencryptSecrets(svc.db, svc.partners.box);
    case 'clock show':
    case 'clock set':
    case 'clock reset': {
      if (!svc.config.sandbox) throw new UsageError('the sandbox clock exists only with SANDBOX=true');
      if (verb === 'set') {
        const text = need(rest[0], 'the instant (ISO-8601 with offset)');
        const ms = Date.parse(text);
        if (Number.isNaN(ms) || !/[zZ]|[+-]\d{2}:?\d{2}$/.test(text))
          throw new UsageError('the instant must be ISO-8601 with an offset, e.g. 2026-09-30T12:00:00+03:00');
        return setSandboxClock(svc, actor, ms);
      }
      if (verb === 'reset') return resetSandboxClock(svc, actor);
      return { now: isoLocal(await svc.clock.now()) };
    }
    default:
      throw new UsageError(
        group ? `unknown command "${[group, verb].filter(Boolean).join(' ')}"` : 'no command',
      );
  }
}

async function main(): Promise<number> {
  if (opt.help || args.length === 0) {
    console.log(USAGE);
    return args.length === 0 && !opt.help ? 2 : 0;
  }
  const config = loadConfig();
  // Logs go to stderr: stdout carries only the JSON answer.
  const log = createLogger(config.logLevel === 'info' ? 'warn' : config.logLevel, pino.destination(2));
  if (args[0] === 'backup' || args[0] === 'restore') return backupOrRestore(config, log, args);
  // While the service runs on this DATA_DIR, this runs on its embedded server; otherwise it starts
  // the server for the command and stops it after.
  const database = await openDatabase({
    databaseUrl: config.databaseUrl,
    dataDir: config.dataDir,
    poolSize: 2,
    prepare: config.pgPreparedStatements,
    joinRunning: true,
    log: (message, level = 'info') => log[level](message),
  });
  // The job queue is wired as in the service, so a use case that enqueues work behaves the same;
  // no workers run here: the service picks the jobs up.
  let boss;
  try {
    // The service's key ring (SECRET_KEY, or the sandbox's DATA_DIR/secret.key), checked against the
    // stored secrets as at start: a command never writes a secret under a key the service lacks.
    const keys = await loadSecretKeys(config);
    await secureStoredSecrets(database.db, keys.box, keys.where);
    boss = await startBoss(database, log);
    const svc = createServices(config, database, { log, jobs: jobQueue(boss), secrets: keys.box });
    // Every change is in the audit log as made from the command line, by the shell's user.
    const user = userInfo().username || 'unknown';
    const answer = await run(
      svc,
      operatorActor({ id: `cli:${user}`, name: user, role: 'admin' }, 'cli'),
      args,
    );
    console.log(typeof answer === 'string' ? answer : JSON.stringify(answer, null, 2));
    return 0;
  } catch (err) {
    if (err instanceof UsageError) {
      console.error(`admin: ${err.message}\n\n${USAGE}`);
      return 2;
    }
    if (err instanceof DomainError) {
      console.error(JSON.stringify({ error: err.reason }));
      return 1;
    }
    throw err;
  } finally {
    await boss?.stop({ graceful: false, close: true, timeout: 1000 });
    await database.close();
  }
}

/** Backup and restore run on the database itself, with PostgreSQL's tools (src/db/backup.ts). */
async function backupOrRestore(
  config: Config,
  log: Logger,
  [verb, file, ...extra]: string[],
): Promise<number> {
  if (!file || extra.length > 0) {
    console.error(`admin: ${verb} takes one file name\n\n${USAGE}`);
    return 2;
  }
  const target = {
    databaseUrl: config.databaseUrl,
    dataDir: config.dataDir,
    log: (message: string, level: 'info' | 'warn' = 'info') => log[level](message),
  };
  try {
    if (verb === 'backup') {
      console.log(JSON.stringify(await backupDatabase(target, file), null, 2));
      return 0;
    }
    const restored = await restoreDatabase(target, file);
    const secrets = await checkRestoredSecrets(config, log);
    console.log(JSON.stringify({ ...restored, secrets }, null, 2));
    return 0;
  } catch (err) {
    if (err instanceof BackupRefused || err instanceof SecretKeyError) {
      console.error(`admin: ${verb} refused: ${err.message}`);
      return 1;
    }
    if (err instanceof BackupUnavailable || err instanceof EmbeddedDatabaseError) {
      console.error(`admin: ${verb} could not run: ${err.message}`);
      return 2;
    }
    throw err;
  }
}

/**
 * After a restore: do the partner secrets open with the key this environment has (SECRET_KEY, or
 * DATA_DIR/secret.key)? Without a key nothing is made up: the answer says where to put it.
 */
async function checkRestoredSecrets(config: Config, log: Logger): Promise<string> {
  const file = join(resolve(config.dataDir), SECRET_KEY_FILE);
  if (!config.secretKey && !existsSync(file)) {
    return `not checked: no SECRET_KEY and no ${file}; the service needs the key the backup's service had (SECRET_KEY, or its DATA_DIR/secret.key copied to ${file})`;
  }
  const keys = await loadSecretKeys(config);
  const database = await openDatabase({
    databaseUrl: config.databaseUrl,
    dataDir: config.dataDir,
    poolSize: 1,
    log: (message, level = 'info') => log[level](message),
  });
  try {
    await secureStoredSecrets(database.db, keys.box, keys.where);
    return `every partner secret opens with ${keys.where} (key ${keys.box.keyId})`;
  } catch (err) {
    if (err instanceof SecretKeyError) {
      throw new SecretKeyError(`the backup was restored, but ${err.message}`);
    }
    throw err;
  } finally {
    await database.close();
  }
}

main().then(
  (code) => {
    process.exitCode = code;
  },
  (err: unknown) => {
    console.error(
      `admin: ${err instanceof ConfigError ? 'configuration error: ' : ''}${(err as Error).message}`,
    );
    process.exitCode = 2;
  },
);

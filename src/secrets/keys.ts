import { join, resolve } from 'node:path';
import { readableByOthers, readOrCreateSecretFile } from './files.ts';
import { newKeyHex, parseKeyHex, SecretBox, SecretKeyError } from './secret-box.ts';

export const SECRET_KEY_FILE = 'secret.key';

export interface SecretKeys {
  box: SecretBox;
  /** Where SECRET_KEY came from, for the start-up log and banner. */
  source: 'SECRET_KEY' | 'file' | 'generated';
  /** The key file, when the key lives in DATA_DIR. */
  path?: string;
  /** Where the key is: `SECRET_KEY` or the key file's path (for messages). */
  where: string;
  /** One line for the banner: where the key is and its id. */
  describe: string;
  /** Things the operator should hear about at start (a key file others can read). */
  warnings: string[];
}

/**
 * The key ring of this process: SECRET_KEY (validated by loadConfig), or in the sandbox without
 * one, `DATA_DIR/secret.key`, generated on the first start; SECRET_KEY_PREVIOUS beside it during a
 * rotation. Called once at start (the service and the command line), never per request.
 */
export async function loadSecretKeys(config: {
  secretKey: string | undefined;
  secretKeyPrevious: string | undefined;
  sandbox: boolean;
  dataDir: string;
}): Promise<SecretKeys> {
  const previous = config.secretKeyPrevious ? parseKeyHex(config.secretKeyPrevious) : undefined;
  const suffix = (box: SecretBox) =>
    `key ${box.keyId}${previous ? `, SECRET_KEY_PREVIOUS ${box.keyIds[1] ?? box.keyId} also read` : ''}`;
  if (config.secretKey) {
    const box = new SecretBox(parseKeyHex(config.secretKey)!, previous);
    return {
      box,
      source: 'SECRET_KEY',
      where: 'SECRET_KEY',
      describe: `SECRET_KEY (${suffix(box)})`,
      warnings: [],
    };
  }
  if (!config.sandbox) throw new SecretKeyError('SECRET_KEY is required when SANDBOX=false');
  const path = resolve(join(config.dataDir, SECRET_KEY_FILE));
  let file;
  try {
    file = await readOrCreateSecretFile(path, newKeyHex);
  } catch (err) {
    throw new SecretKeyError(
      `cannot create or read the secret key ${path} (${(err as NodeJS.ErrnoException).code ?? (err as Error).message}): ` +
        'point DATA_DIR at a directory this user can write, or set SECRET_KEY',
    );
  }
  const key = parseKeyHex(file.value);
  if (!key) {
    throw new SecretKeyError(
      `${path} does not hold a key of 64 hex characters: restore it from the backup kept with this database ` +
        '(without it the stored partner secrets cannot be read), or set SECRET_KEY',
    );
  }
  const box = new SecretBox(key, previous);
  const warnings = readableByOthers(path)
    ? [`${path} can be read by other users of this machine: chmod 600 it`]
    : [];
  return {
    box,
    source: file.created ? 'generated' : 'file',
    path,
    where: path,
    describe: `${path}${file.created ? ' (generated now)' : ''} (${suffix(box)}); back it up with the database`,
    warnings,
  };
}

import { formatDifferences, reconcile } from '../app/reconcile.ts';
import { loadConfig } from '../config.ts';
import { openDatabase } from '../db/database.ts';

/**
 * `npm run reconcile`: checks every wallet against its ledger and every paid order against its
 * payment, on the database the service uses (same environment: DATABASE_URL, DATA_DIR). Prints the
 * differences; exits 1 when there are any, 2 when it could not run.
 */
try {
  const config = loadConfig();
  const database = await openDatabase({
    databaseUrl: config.databaseUrl,
    dataDir: config.dataDir,
    poolSize: 1,
    prepare: config.pgPreparedStatements,
    joinRunning: true,
  });
  try {
    const result = await reconcile(database.db);
    console.log(formatDifferences(result));
    process.exitCode = result.differences.length ? 1 : 0;
  } finally {
    await database.close();
  }
} catch (err) {
  console.error(`reconcile: ${(err as Error).message}`);
  process.exitCode = 2;
}

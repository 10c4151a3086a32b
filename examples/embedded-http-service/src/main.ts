import { pino } from 'pino';
import { parseEnv } from './env.ts';
import { startService } from './start-service.ts';

// The process entry: reads the environment, starts the service, stops it cleanly on SIGTERM/SIGINT.
const fail = (err: unknown): never => {
  process.stderr.write(`signup service: ${err instanceof Error ? err.message : String(err)}\n`);
  process.exit(1);
};

let env;
try {
  env = parseEnv(process.env);
} catch (err) {
  fail(err);
}
if (env) {
  const logger = pino({ level: env.LOG_LEVEL, name: 'signup-service' });
  const service = await startService({
    ...(env.DATABASE_URL ? { databaseUrl: env.DATABASE_URL } : { dataDir: env.SIGNUPS_DATA_DIR }),
    host: env.HOST,
    port: env.PORT,
    verifyWithinSeconds: env.SIGNUP_VERIFY_TIMEOUT_SECONDS,
    logger,
  }).catch(fail);
  const shutdown = (signal: NodeJS.Signals) => {
    logger.info({ signal }, 'shutting down');
    service.stop().then(
      () => process.exit(0),
      (err: unknown) => {
        logger.error({ err }, 'shutdown failed');
        process.exit(1);
      },
    );
  };
  process.once('SIGTERM', shutdown);
  process.once('SIGINT', shutdown);
}

import { pino } from 'pino';
import { parseEnv } from './env.ts';
import { startControlPlane } from './start-control-plane.ts';

// The control plane's process entry: the only place that reads process.env (through parseEnv).
const fail = (err: unknown): never => {
  process.stderr.write(`sagaflow control: ${err instanceof Error ? err.message : String(err)}\n`);
  process.exit(1);
};

let env;
try {
  env = parseEnv(process.env);
} catch (err) {
  fail(err);
}
if (env) {
  const logger = pino({ level: env.LOG_LEVEL, name: 'sagaflow-control' });
  const plane = await startControlPlane(env, logger).catch(fail);
  let signals = 0;
  const shutdown = (signal: string) => {
    signals += 1;
    if (signals > 1) process.exit(1);
    logger.info({ signal }, 'shutting down');
    plane.stop().then(
      () => process.exit(0),
      (err: unknown) => {
        logger.error({ err }, 'shutdown failed');
        process.exit(1);
      },
    );
  };
  process.on('SIGINT', () => shutdown('SIGINT'));
  process.on('SIGTERM', () => shutdown('SIGTERM'));
}

import { parseEnv } from './env.ts';
import { createLogger } from './logging/create-logger.ts';

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
  const logger = createLogger(env, process.stdout.isTTY);
  // Loaded once the settings are known good, so a bad setting is reported without waiting for the HTTP
  // server, the API and the console's routes to load.
  const { startControlPlane } = await import('./start-control-plane.ts');
  const plane = await startControlPlane(env, logger).catch(fail);
  let firstSignalAt = 0;
  const shutdown = (signal: string) => {
    // A terminal's Ctrl-C reaches us and our supervisor at once, and the supervisor passes it on:
    // a second signal close behind the first is the same request. A later one forces the exit.
    if (firstSignalAt) {
      if (Date.now() - firstSignalAt > 2000) process.exit(1);
      return;
    }
    firstSignalAt = Date.now();
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

import { parseEnv } from './env.ts';
import { createLogger } from './logging/create-logger.ts';
import type { ControlPlane } from './start-control-plane.ts';

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
  // The handlers go in before the start: a SIGINT/SIGTERM while the lock is held and the database
  // migrates must stop it cleanly (the lock released, an exit code), not kill it by the signal.
  const startUp = new AbortController();
  let plane: ControlPlane | undefined;
  let firstSignalAt = 0;
  const stop = () => {
    plane?.stop().then(
      () => process.exit(0),
      (err: unknown) => {
        logger.error({ err }, 'shutdown failed');
        process.exit(1);
      },
    );
  };
  const shutdown = (signal: string) => {
    // A terminal's Ctrl-C reaches us and our supervisor at once, and the supervisor passes it on:
    // a second signal close behind the first is the same request. A later one forces the exit.
    if (firstSignalAt) {
      if (Date.now() - firstSignalAt > 2000) process.exit(1);
      return;
    }
    firstSignalAt = Date.now();
    logger.info({ signal, starting: !plane }, 'shutting down');
    // During start-up the start gives up at its next safe point and the code below exits.
    if (plane) stop();
    else startUp.abort();
  };
  process.on('SIGINT', () => shutdown('SIGINT'));
  process.on('SIGTERM', () => shutdown('SIGTERM'));
  // Loaded once the settings are known good, so a bad setting is reported without waiting for the HTTP
  // server, the API and the console's routes to load.
  const { startControlPlane, StartAborted } = await import('./start-control-plane.ts');
  try {
    plane = await startControlPlane(env, logger, { signal: startUp.signal });
  } catch (err) {
    if (err instanceof StartAborted) {
      logger.info('start-up abandoned; data directory released');
      process.exit(0);
    }
    fail(err);
  }
  // A signal that arrived once nothing was left to abandon: the running plane stops like any other.
  if (startUp.signal.aborted) stop();
}

// What the child worker scripts the SIGKILL tests start (through `spawnWorker`) share: their database URL
// from argv, an engine with its pool on it, `ready <worker id>` on stdout, and lines from the test on stdin.
import { pino } from 'pino';
import { createDatabase, createEngine, type Database, type Engine, type EngineOptions } from '../../src/index.ts';

/** The database URL the test passed as the script's first argument. */
export function urlFromArgs(): string {
  const url = process.argv[2];
  if (!url) throw new Error(`usage: ${process.argv[1] ?? 'worker'} <database url> [mode]`);
  return url;
}

/** A function that resolves once per line the test writes on stdin (`ChildWorker.say`), in order. */
export function linesFromTest(): () => Promise<void> {
  let lines = 0;
  const waiters: (() => void)[] = [];
  process.stdin.on('data', (chunk: Buffer) => {
    lines += chunk.toString().split('\n').length - 1;
    while (lines > 0 && waiters.length > 0) {
      lines -= 1;
      waiters.shift()?.();
    }
  });
  return () => new Promise<void>((resolve) => waiters.push(resolve));
}

/**
 * Opens the database of argv (or takes `db`), creates the engine (silent unless a logger is given), starts
 * its pool, runs `beforeReady`, then prints `ready <worker id>`, which `spawnWorker` waits for.
 */
export async function startChildPool(
  options: Omit<EngineOptions, 'db' | 'logger'> & {
    db?: Database;
    poolSize?: number;
    logger?: EngineOptions['logger'];
    beforeReady?: (engine: Engine) => Promise<void>;
  },
): Promise<Engine> {
  const { db, poolSize = 4, beforeReady, logger = pino({ level: 'silent' }), ...rest } = options;
  const engine = createEngine({
    ...rest,
    db: db ?? (await createDatabase({ kind: 'postgres', url: urlFromArgs(), poolSize })),
    logger,
  });
  engine.startWorkers();
  await beforeReady?.(engine);
  process.stdout.write(`ready ${engine.runtime.workerId}\n`);
  return engine;
}

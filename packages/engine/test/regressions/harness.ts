import { pino } from 'pino';
import { createEngine, type Engine, type EngineOptions } from '../../src/create-engine.ts';
import type { Database } from '../../src/db/database.ts';
import type { Faults } from '../../src/runtime/runtime-deps.ts';
import { TestClock } from '../../src/testing/test-clock.ts';

/** An engine with no worker pool: the test drives replays itself (executeRun) to force interleavings. */
export function bareEngine(
  db: Database,
  opts: Omit<EngineOptions, 'db' | 'clock' | 'logger'> & { clock?: TestClock; faults?: Faults },
): Engine {
  return createEngine({
    ...opts,
    db,
    clock: opts.clock ?? new TestClock(),
    logger: pino({ level: 'silent' }),
    config: {
      ...opts.config,
      worker: { poll_interval_ms: 10, ...opts.config?.worker },
      logging: { anomaly_level: null },
    },
  });
}

export function gate(): { promise: Promise<void>; open: () => void } {
  let open!: () => void;
  const promise = new Promise<void>((r) => (open = r));
  return { promise, open };
}

export const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** Resolves 'timeout' if `p` has not settled within `ms`. */
export async function within<T>(p: Promise<T>, ms: number): Promise<T | 'timeout'> {
  let timer: NodeJS.Timeout | undefined;
  const t = new Promise<'timeout'>((r) => (timer = setTimeout(() => r('timeout'), ms)));
  try {
    return await Promise.race([p, t]);
  } finally {
    clearTimeout(timer);
  }
}

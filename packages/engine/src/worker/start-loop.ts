import { setTimeout as sleep } from 'node:timers/promises';

export interface Loop {
  /** Lets the pass in flight finish, then stops; waits for it. */
  stop(): Promise<void>;
}

/**
 * A background loop: runs `pass` (first waiting `intervalMs` when `firstAfterInterval`), then waits
 * `intervalMs` (at once again when the pass says there is more to do), until stopped. A pass that
 * throws is handed to `onError` and the loop carries on: the engine's sweeps are idempotent and
 * retried on the next pass.
 */
export function startLoop(opts: {
  intervalMs: number;
  /** Waits one interval before the first pass: for work that is never due the moment a process starts. */
  firstAfterInterval?: boolean;
  /** Returns true when it left work behind and should run again without waiting. */
  pass: () => Promise<boolean | void>;
  onError: (err: unknown) => void;
}): Loop {
  let running = true;
  const stopSignal = new AbortController();
  const pause = () => sleep(opts.intervalMs, undefined, { signal: stopSignal.signal }).catch(() => undefined);
  const loop = async () => {
    if (opts.firstAfterInterval) await pause();
    while (running) {
      let more = false;
      try {
        more = (await opts.pass()) === true;
      } catch (err) {
        opts.onError(err);
      }
      if (!more || !running) await pause();
    }
  };
  const looping = loop();
  return {
    async stop() {
      running = false;
      stopSignal.abort();
      await looping;
    },
  };
}

import { setTimeout as sleep } from 'node:timers/promises';
import { progress } from './progress.ts';
import type { RunObserver } from './run-observer.ts';

/** Shared between the starters and the waiter: what has been started, and what the last poll saw finished. */
export interface LoadState {
  started: number;
  finished: number;
  allStarted: boolean;
  /** Runs in status Running, summed over polls (divide by `polls` for the mean). */
  runningSum: number;
  polls: number;
  /** The engine's sessions by state, summed over polls (see {@link RunObserver.sampleSessions}). */
  readonly sessions: Map<string, number>;
}

/**
 * Polls the finished-run count into `load.finished` until every started run is finished (once the
 * starters are done). Fails if any run finished other than Completed, or if the count stops moving
 * for `stallMs`. Returns the client clock at the poll that saw the last run finished.
 */
export async function waitForFinishedRuns(
  observer: RunObserver,
  load: LoadState,
  options: { pollMs: number; stallMs: number; label: string },
): Promise<number> {
  let lastMoveAt = performance.now();
  let lastReportAt = performance.now();
  for (;;) {
    const { finished, notCompleted, running } = await observer.countFinished();
    const now = performance.now();
    load.runningSum += running;
    load.polls += 1;
    for (const [state, n] of await observer.sampleSessions())
      load.sessions.set(state, (load.sessions.get(state) ?? 0) + n);
    if (notCompleted > 0) {
      throw new Error(
        `${options.label}: ${notCompleted} runs did not complete: ${await observer.describeUnfinished()}`,
      );
    }
    if (finished !== load.finished) {
      load.finished = finished;
      lastMoveAt = now;
    } else if (now - lastMoveAt > options.stallMs && load.started > finished) {
      throw new Error(
        `${options.label}: stuck at ${finished}/${load.started} finished runs for ${options.stallMs} ms: ${await observer.describeUnfinished()}`,
      );
    }
    if (load.allStarted && finished >= load.started) return now;
    if (now - lastReportAt > 5_000) {
      progress(
        `${options.label}: ${finished}/${load.started} runs finished${load.allStarted ? '' : ', still starting'}`,
      );
      lastReportAt = now;
    }
    await sleep(options.pollMs);
  }
}

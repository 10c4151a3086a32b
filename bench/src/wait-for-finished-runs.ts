import { setTimeout as sleep } from 'node:timers/promises';
import { progress } from './progress.ts';
import type { RunObserver } from './run-observer.ts';

/**
 * Polls until `expected` runs are finished; fails if any finished other than Completed, or if the
 * count stops moving for `stallMs`. Returns the client clock when the last one was seen.
 */
export async function waitForFinishedRuns(
  observer: RunObserver,
  expected: number,
  options: { pollMs: number; stallMs: number; label: string },
): Promise<number> {
  let lastCount = -1;
  let lastMoveAt = performance.now();
  let lastReportAt = performance.now();
  for (;;) {
    const { finished, notCompleted } = await observer.countFinished();
    const now = performance.now();
    if (notCompleted > 0) {
      throw new Error(`${options.label}: ${notCompleted} runs did not complete: ${await observer.describeUnfinished()}`);
    }
    if (finished >= expected) return now;
    if (finished !== lastCount) {
      lastCount = finished;
      lastMoveAt = now;
    } else if (now - lastMoveAt > options.stallMs) {
      throw new Error(
        `${options.label}: stuck at ${finished}/${expected} finished runs for ${options.stallMs} ms: ${await observer.describeUnfinished()}`,
      );
    }
    if (now - lastReportAt > 5_000) {
      progress(`${options.label}: ${finished}/${expected} runs finished`);
      lastReportAt = now;
    }
    await sleep(options.pollMs);
  }
}

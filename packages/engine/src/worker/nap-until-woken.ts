/**
 * Waits `ms`, or until the function handed to `setWake` is called, whichever comes first. A plain
 * timer cleared on waking, not an aborted `timers/promises` sleep: the loop naps and is woken once
 * per job that finishes, and every abort builds a DOMException and an AbortError for nobody (3 % of
 * the engine's CPU at c=8 in the bench's profile).
 */
export function napUntilWoken(ms: number, setWake: (wake: () => void) => void): Promise<'poll' | 'wake'> {
  return new Promise((resolve) => {
    const timer = setTimeout(() => resolve('poll'), ms);
    setWake(() => {
      clearTimeout(timer);
      resolve('wake');
    });
  });
}

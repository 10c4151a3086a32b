import { createHook } from 'node:async_hooks';

/** What the process scheduled over a window: async resources by type, and where its timers and immediates came from. */
export interface AsyncWork {
  /** Async resources created, by async_hooks type (PROMISE, Timeout, Immediate, TickObject, TCPWRAP…). */
  readonly byType: Map<string, number>;
  /**
   * Timers, immediates and promises by the first frame of the bench's or the engine's code, or a
   * dependency's, that made them ("(node internals)" for a promise of Node's streams alone).
   */
  readonly timersBySite: Map<string, number>;
}

/** The first stack frame outside Node's own modules and this file: who asked for the timer. */
function armingSite(): string {
  const frames = (new Error().stack ?? '').split('\n').slice(1);
  for (const f of frames) {
    if (f.includes('node:') || f.includes('count-async-work')) continue;
    const m = /\((.*):(\d+):\d+\)$/.exec(f) ?? /at (.*):(\d+):\d+$/.exec(f);
    if (!m) continue;
    const file = m[1]!.replace(/^file:\/\//, '');
    const short = file.includes('node_modules')
      ? file.replace(/.*node_modules\//, '')
      : file.replace(/.*\/(packages|bench)\//, '$1/');
    return `${short}:${m[2]}`;
  }
  return '(node internals)';
}

/**
 * Counts the asynchronous work the process creates until the returned function is called: a
 * figure load does not move (CPU time per flow does, on a shared machine), for judging a change to
 * the event-loop turns of a flow (ADR 0064) or to its promises (ADR 0067). Costly while on (a stack
 * per timer and per promise): for
 * a counting window, never for a timed one.
 */
export function countAsyncWork(): () => AsyncWork {
  const byType = new Map<string, number>();
  const timersBySite = new Map<string, number>();
  const hook = createHook({
    init(_id, type) {
      byType.set(type, (byType.get(type) ?? 0) + 1);
      if (type === 'Timeout' || type === 'Immediate' || type === 'PROMISE') {
        const site = `${type} ${armingSite()}`;
        timersBySite.set(site, (timersBySite.get(site) ?? 0) + 1);
      }
    },
  });
  hook.enable();
  return () => {
    hook.disable();
    return { byType, timersBySite };
  };
}

import { exitOf, forkBenchChild } from './fork-bench-child.ts';

/** What replica-starter.ts is told: the database, how many runs to keep open, with how many loops. */
export interface StarterSpec {
  readonly url: string;
  readonly backlog: number;
  readonly starters: number;
}

/** One count of the starter's: runs it started, and runs the observer saw finished, so far. */
export interface StarterLoad {
  readonly started: number;
  readonly finished: number;
}

/** The scale-out's starter process, feeding the backlog until {@link ReplicaStarter.stop}. */
export interface ReplicaStarter {
  readonly pid: number;
  /** Rejects as soon as the process ends unasked (a run that did not complete, a crash); resolves once it stopped when asked. */
  readonly running: Promise<void>;
  stop(): Promise<void>;
}

/** Forks replica-starter.ts; `onLoad` hears each of its counts (every ~20 ms). */
export function forkReplicaStarter(spec: StarterSpec, onLoad: (load: StarterLoad) => void): ReplicaStarter {
  const child = forkBenchChild(new URL('./replica-starter.ts', import.meta.url), [JSON.stringify(spec)]);
  const pid = child.pid;
  if (pid === undefined) throw new Error('the starter process has no pid');
  child.on('message', onLoad);
  let stopping = false;
  const running = exitOf(child).then((exit) => {
    if (!stopping || exit !== 'code 0') throw new Error(`the scale-out's starter process ${pid} exited (${exit})`);
  });
  running.catch(() => undefined);
  return {
    pid,
    running,
    async stop() {
      stopping = true;
      if (child.connected) child.send('stop');
      await running;
    },
  };
}

import { forkBenchChild } from './fork-bench-child.ts';

/** A worker process forked by {@link forkReplica}, once it has said it is ready. */
export interface Replica {
  readonly pid: number;
  /** Why the process ended before it was asked to stop (exit code or signal); null while it is well. */
  readonly failure: () => string | null;
  /** Asks it to drain and exit; resolves once it has, with how many errors its engine logged. */
  stop(): Promise<{ errors: number }>;
}

/**
 * Forks replica-worker.ts (an engine with `concurrency` workers on `url`) and resolves when it is
 * ready to claim jobs. Its stdout and stderr go to this process's stderr, so the report on stdout
 * stays clean. Fails if it exits before it is ready or is not ready within `readyTimeoutMs`.
 */
export async function forkReplica(url: string, concurrency: number, readyTimeoutMs = 120_000): Promise<Replica> {
  const child = forkBenchChild(new URL('./replica-worker.ts', import.meta.url), [url, String(concurrency)]);
  let stopping = false;
  let failure: string | null = null;
  let errors: number | null = null;
  child.on('message', (message) => {
    if (typeof message === 'object' && message !== null && 'errors' in message) errors = Number(message.errors);
  });
  const exited = new Promise<void>((resolve) =>
    child.once('exit', (code, signal) => {
      if (!stopping || code !== 0) failure = `worker process ${child.pid} exited (${signal ?? `code ${code}`})`;
      resolve();
    }),
  );
  await new Promise<void>((resolve, reject) => {
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`worker process ${child.pid} was not ready within ${readyTimeoutMs / 1000} s`));
    }, readyTimeoutMs);
    child.on('message', (message) => {
      if (message !== 'ready') return;
      clearTimeout(timer);
      resolve();
    });
    void exited.then(() => {
      clearTimeout(timer);
      reject(new Error(`${failure ?? 'worker process exited'} before it was ready`));
    });
  });
  const pid = child.pid;
  if (pid === undefined) throw new Error('the worker process has no pid');
  return {
    pid,
    failure: () => failure,
    async stop() {
      stopping = true;
      if (child.exitCode === null && child.signalCode === null) child.send('stop');
      await exited;
      if (failure) throw new Error(failure);
      if (errors === null) throw new Error(`worker process ${pid} exited without saying how many errors it logged`);
      return { errors };
    },
  };
}

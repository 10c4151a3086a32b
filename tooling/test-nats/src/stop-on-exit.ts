/**
 * Runs `destroySync` when this process exits or gets SIGINT/SIGTERM, so a failed or interrupted test
 * run leaves no broker behind. Returns the function that cancels it. A SIGKILL runs nothing: the
 * reaper in {@link startNatsServer} handles that at the next start.
 */
export function stopOnExit(destroySync: () => void): () => void {
  pending.add(destroySync);
  if (pending.size === 1) {
    process.on('exit', runAll);
    for (const signal of signals) process.on(signal, onSignal);
  }
  return () => {
    pending.delete(destroySync);
    if (pending.size === 0) detach();
  };
}

const pending = new Set<() => void>();
const signals = ['SIGINT', 'SIGTERM'] as const;

function runAll(): void {
  for (const destroySync of [...pending]) {
    pending.delete(destroySync);
    try {
      destroySync();
    } catch {
      // The process is going away; the reaper gets the rest.
    }
  }
}

function onSignal(signal: NodeJS.Signals): void {
  runAll();
  detach();
  // Our listener replaced Node's default "die on this signal": restore it unless someone else listens.
  if (process.listenerCount(signal) === 0) process.kill(process.pid, signal);
}

function detach(): void {
  process.removeListener('exit', runAll);
  for (const signal of signals) process.removeListener(signal, onSignal);
}

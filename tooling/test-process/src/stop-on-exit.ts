/**
 * Runs `destroySync` when this process exits or receives SIGINT/SIGTERM, so servers a test started are
 * not left running when a test run fails or is interrupted. Returns a function that cancels the
 * registration. A SIGKILL runs nothing: each harness reaps what a killed run left at its next start.
 */
export function stopOnExit(destroySync: () => void): () => void {
  pending.add(destroySync);
  install();
  return () => {
    pending.delete(destroySync);
    if (pending.size === 0) uninstall();
  };
}

const pending = new Set<() => void>();
const signals = ['SIGINT', 'SIGTERM'] as const;
let installed = false;

function destroyAll(): void {
  for (const destroySync of [...pending]) {
    pending.delete(destroySync);
    try {
      destroySync();
    } catch {
      // Exiting anyway; the reaper gets whatever is left.
    }
  }
}

function onSignal(signal: NodeJS.Signals): void {
  destroyAll();
  uninstall();
  // Our listener replaced Node's default "die on signal"; restore it unless someone else handles it.
  if (process.listenerCount(signal) === 0) process.kill(process.pid, signal);
}

function install(): void {
  if (installed) return;
  installed = true;
  process.on('exit', destroyAll);
  for (const signal of signals) process.on(signal, onSignal);
}

function uninstall(): void {
  if (!installed) return;
  installed = false;
  process.removeListener('exit', destroyAll);
  for (const signal of signals) process.removeListener(signal, onSignal);
}

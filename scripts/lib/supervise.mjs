// The part of `npm start` that runs its processes: it waits for each to answer, stops them all on
// Ctrl-C (or SIGTERM), and when one ends on its own, stops the others and fails. Kept apart from the
// set-up (install, generate, builds) so that the tests can run it on real processes while the suite's
// own console build runs (ADR 0109's addendum).

/** SIGKILL for the children still running this long after a stop asked them to end. */
const killAfterMs = 15_000;

function fail(message) {
  console.error(`[sagaflow] ${message}`);
  process.exit(1);
}

// A child has ended when it exited with a code or was ended by a signal (then exitCode stays null).
const hasEnded = (c) => c.exitCode !== null || c.signalCode !== null;
const exited = (c) => new Promise((r) => (hasEnded(c) ? r() : c.once('exit', () => r())));

/**
 * The processes of one `npm start`. Signal handlers go in at once, so a Ctrl-C at any moment (a
 * child still starting included) stops every child and exits 0 once they have ended.
 */
export function supervise() {
  const children = [];
  let stopping = false;
  const stopAll = (signal) => {
    for (const c of children) if (!hasEnded(c)) c.kill(signal);
  };
  /** Once stopping: waits for every child to end, then exits 0. */
  async function stopped() {
    await Promise.all(children.map(exited));
    console.error('[sagaflow] stopped');
    process.exit(0);
  }
  for (const sig of ['SIGINT', 'SIGTERM']) {
    process.on(sig, () => {
      if (stopping) return;
      stopping = true;
      console.error(`\n[sagaflow] stopping (${sig})…`);
      stopAll('SIGTERM');
      setTimeout(() => stopAll('SIGKILL'), killAfterMs).unref();
      // Nothing may be waiting for the children (no start-up wait, no final race yet): end once they have.
      void stopped();
    });
  }

  return {
    /** Supervises `child`, a process it started. */
    add(child) {
      children.push(child);
      return child;
    },
    /** Waits until `url` answers 2xx; fails when `child` ends first or `timeoutMs` passes. */
    async waitForHttp(url, what, child, timeoutMs = 120_000) {
      const deadline = Date.now() + timeoutMs;
      let dots = 0;
      while (Date.now() < deadline) {
        // A Ctrl-C during start-up: the signal handler stops the children and exits once they ended.
        if (stopping) return new Promise(() => undefined);
        if (hasEnded(child))
          fail(
            `${what} exited during start-up (${child.exitCode !== null ? `code ${child.exitCode}` : child.signalCode}); see its output above`,
          );
        try {
          const res = await fetch(url);
          if (res.ok) return;
        } catch {
          // not listening yet
        }
        if (++dots % 10 === 0)
          console.error(
            `[sagaflow] waiting for ${what}… (${Math.round((timeoutMs - (deadline - Date.now())) / 1000)}s)`,
          );
        await new Promise((r) => setTimeout(r, 500));
      }
      fail(`${what} did not answer at ${url} within ${timeoutMs / 1000}s`);
    },
    /**
     * Runs until a child ends or a signal stops them: a child that ends on its own stops the others
     * and fails (exit 1, "a process stopped unexpectedly"); a Ctrl-C exits 0.
     */
    async untilStopped() {
      await Promise.race(children.map(exited));
      if (stopping) return new Promise(() => undefined);
      stopping = true;
      stopAll('SIGTERM');
      setTimeout(() => stopAll('SIGKILL'), killAfterMs).unref();
      await Promise.all(children.map(exited));
      fail('a process stopped unexpectedly; see its output above');
    },
  };
}

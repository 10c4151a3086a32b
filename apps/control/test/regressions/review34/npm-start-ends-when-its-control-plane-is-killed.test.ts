import { describe, expect, it } from 'vitest';
import { supervisedProduct, until, within } from './control-process.ts';

// scripts/start.mjs, its last lines: when a child ends, it stops the other and fails with "a process
// stopped unexpectedly; see its output above". Its `exited` helper tests `c.exitCode !== null`, which
// a death by signal (the OOM killer's SIGKILL) never sets; by then that child's 'exit' has been
// emitted, so `await Promise.all(children.map(exited))` waits for an event that never comes again:
// once the console has stopped nothing keeps the event loop alive and Node ends the script with 13
// ("unsettled top-level await") instead of the script's own message and exit 1.
describe('review 34: `npm start` when its running control plane is SIGKILLed (e.g. by the OOM killer)', () => {
  it('npm start stops the console and exits non-zero, saying a process stopped unexpectedly', async () => {
    const start = await supervisedProduct('npm-killed');
    const out = start.output;
    try {
      // Progress: both are up (the banner), and the control plane has logged its pid.
      await until(async () => (out().includes('Ctrl-C stops it') ? true : undefined));
      const m = /"pid":(\d+),"hostname":"[^"]*","name":"sagaflow-control"/.exec(out());
      expect(m, 'the control plane logged its pid').not.toBeNull();
      process.kill(Number(m?.[1]), 'SIGKILL');
      const code = await within(start.exited, 30_000);
      // null: still running 30 s later; 13: Node's exit for a top-level await that can never settle.
      expect({ code, said: out().includes('a process stopped unexpectedly') }, out().slice(-400)).toEqual({
        code: 1,
        said: true,
      });
    } finally {
      start.stop();
    }
  }, 600_000);
});

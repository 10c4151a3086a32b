import { describe, expect, it } from 'vitest';
import { supervisedProduct, until, within } from './control-process.ts';

// README: "Ctrl-C stops both." scripts/start.mjs: on SIGINT/SIGTERM it sends SIGTERM to its children
// and SIGKILLs them 15 s later; so `npm start` should be gone well within 30 s of a Ctrl-C. Its wait
// for the control plane (waitForHttp) stops early only on `child.exitCode !== null`; a control plane
// that a Ctrl-C ends during start-up dies by the signal (exitCode null, signalCode set), and the
// wait polls on for its whole 120 s.
describe('review 34: Ctrl-C while `npm start` is starting the control plane', () => {
  it('npm start stops within 30 s instead of waiting out its 120 s start-up deadline', async () => {
    const start = await supervisedProduct('npm-start', { LOG_LEVEL: 'debug' });
    const out = start.output;
    const { exited } = start;
    try {
      // Progress: the control plane holds the data directory and is migrating it.
      await until(async () => (/"status":"applying"/.test(out()) ? true : undefined));
      const pid = start.child.pid ?? 0;
      process.kill(-pid, 'SIGINT');
      const signalled = Date.now();
      const code = await within(exited, 30_000);
      const tookMs = Date.now() - signalled;
      expect(out(), 'the Ctrl-C landed during start-up').not.toContain('control plane listening');
      expect(code, `npm start still running ${tookMs} ms after Ctrl-C:\n${out().slice(-600)}`).not.toBeNull();
    } finally {
      start.stop();
    }
  }, 600_000);
});

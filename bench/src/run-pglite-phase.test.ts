import { describe, expect, it } from 'vitest';
import { runPglitePhaseInChild } from './run-pglite-phase.ts';

describe('runPglitePhaseInChild', () => {
  it('runs the floor and the engine on a fresh PGlite in a process of its own and sends back both loops', async () => {
    const result = await runPglitePhaseInChild({
      store: 'memory',
      concurrency: 2,
      concurrencies: [2],
      warmupMs: 200,
      measureMs: 400,
    });
    // Measured elsewhere: nothing this process loaded (DBOS's hooks, in the bench) weighs on it.
    expect(result.pid).not.toBe(process.pid);
    expect(result.store).toBe('memory');
    expect(result.flows).toBeGreaterThan(0);
    expect(result.nodeCpuMsPerFlow).toBeGreaterThan(0);
    expect(result.floor.flows).toBeGreaterThan(0);
    expect(result.settings).toMatch(/^fsync=\w+, synchronous_commit=\w+$/);
  }, 120_000);

  it('fails naming the phase and the exit when its process dies before it sent its result', async () => {
    // A worker pool of 0 is refused by the engine's config, after the floor ran: the child fails mid-phase.
    await expect(
      runPglitePhaseInChild({ store: 'memory', concurrency: 0, concurrencies: [0], warmupMs: 10, measureMs: 10 }),
    ).rejects.toThrow(/the PGlite memory c=0 phase's process \d+ exited \(code 1\) before it sent its result/);
  }, 60_000);
});

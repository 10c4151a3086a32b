import { describe, expect, it } from 'vitest';
import { runClosedLoop } from './run-closed-loop.ts';

describe('runClosedLoop', () => {
  it('goes on past its time until at least `atLeastFlows` flows started, each client one at a time', async () => {
    let inFlight = 0;
    let most = 0;
    const runOne = async () => {
      most = Math.max(most, ++inFlight);
      await new Promise((resolve) => setImmediate(resolve));
      inFlight -= 1;
    };
    const loop = await runClosedLoop(3, 0, runOne, { atLeastFlows: 25 });
    // A client checks the count and takes its number in one go, so the three stop at 25 exactly.
    expect(loop.flows).toBe(25);
    expect(loop.latenciesMs).toHaveLength(loop.flows);
    expect(most).toBe(3);
  });

  it('runs no flow when it has neither time nor a count to reach', async () => {
    let ran = 0;
    const loop = await runClosedLoop(2, 0, async () => void (ran += 1));
    expect(ran).toBe(0);
    expect(loop.flows).toBe(0);
  });
});

import { fileURLToPath } from 'node:url';
import { pino } from 'pino';
import { expect } from 'vitest';
import { createEngine } from '../../src/index.ts';
import { fusedSigkillConfig } from '../regressions/fused-steps/support/fused-sigkill-flow.ts';
import { burstKillFlow } from '../regressions/review13/support/burst-kill-flow.ts';
import type { childWorkerSuite } from './spawn-worker.ts';
import { waitFor } from './wait-for.ts';

const workerScript = fileURLToPath(new URL('../regressions/review14/support/round-kill-worker.ts', import.meta.url));
/** Progress-driven waits: each fails only when its condition has not come in this long (a loaded 2-core machine). */
const WAIT_MS = 60_000;

/**
 * Reviews 14 and 16 (ADR 0070, 0077): a worker process (review 14's round-kill worker: review 13's
 * bursts of starts, an even run's first step never returning) SIGKILLed once several of its rounds
 * (ADR 0066) went and came back and at least `inFlight` are out, as its stdout last told. A round is
 * one transaction: all of it committed before the kill or none of it did. An engine here then finishes
 * whatever did, exactly once per step: every run ends Completed, none left open or stuck, no start
 * written twice, and steps the dead worker held were taken back (not vacuous).
 */
export async function killWithRoundsOut(suite: ReturnType<typeof childWorkerSuite>, inFlight: number) {
  const { db } = suite;
  const { proc } = await suite.spawn(workerScript);
  let out = 0;
  let back = 0;
  let lines = '';
  let killed = false;
  let exitedWith: string | undefined;
  const exited = new Promise<NodeJS.Signals | null>((r) =>
    proc.once('exit', (code, signal) => {
      exitedWith = `code ${code}, signal ${signal}`;
      r(signal);
    }),
  );
  // Several rounds gone and back, and `inFlight` out as of the child's latest output: the kill lands on
  // rounds in flight. It is sent as that output comes, not from a poll, which on a loaded machine missed
  // every moment two rounds were out (69 rounds, none seen two at a time); each round holds its
  // transaction open a while after its writes (the child's), so such moments last.
  proc.stdout?.on('data', (chunk: Buffer) => {
    lines += chunk.toString();
    const all = lines.split('\n');
    lines = all.pop()!;
    for (const line of all)
      if (line === 'round out') out++;
      else if (line === 'round back') back++;
    if (!killed && back >= 5 && out - back >= inFlight) {
      killed = true;
      proc.kill('SIGKILL');
    }
  });
  await waitFor(
    () => `rounds to go, and ${inFlight} to be out (seen: ${out} out, ${back} back)`,
    async () => {
      if (killed) return true;
      // A child that died on its own will never send a round: say so now, not after the whole wait.
      if (exitedWith !== undefined)
        throw new Error(`the child worker exited before the kill (${exitedWith}; seen: ${out} out, ${back} back)`);
      return undefined;
    },
    WAIT_MS,
  );
  expect(await exited).toBe('SIGKILL');

  const { flow, actions } = burstKillFlow(async (n) => n);
  const engine = suite.adopt(
    createEngine({ db, flows: [flow], actions, config: fusedSigkillConfig, logger: pino({ level: 'silent' }) }),
  );
  engine.startWorkers();
  const open = () => db.prisma.flowRun.count({ where: { status: { in: ['Pending', 'Running', 'Waiting'] } } });
  await waitFor('every run to end', async () => ((await open()) === 0 ? true : undefined), WAIT_MS);
  await engine.stopWorkers(2000);

  const runs = await db.prisma.flowRun.findMany({ include: { actions: true, events: true } });
  expect(runs.length).toBeGreaterThan(0);
  const wrong = runs.flatMap((run) => {
    const n = run.input as number;
    const completedEvents = run.events.filter((e) => e.type === 'action.completed');
    const fine =
      run.status === 'Completed' &&
      run.stuck_reason === null &&
      JSON.stringify(run.output) === JSON.stringify([n, n * 10]) &&
      run.actions.length === 2 &&
      run.actions.every(
        (s) => s.status === 'Completed' && completedEvents.filter((e) => e.row_id === s.id).length === 1,
      ) &&
      run.events.filter((e) => e.type === 'run.completed').length === 1;
    return fine ? [] : [`${n}: ${run.status} ${run.events.map((e) => e.type).join(',')}`];
  });
  expect(wrong).toEqual([]);
  // Not vacuous: steps the dead worker held were taken back and run again here.
  expect(runs.some((run) => run.actions.some((s) => s.attempts >= 2))).toBe(true);
  expect(await db.prisma.job.count()).toBe(0);
  const inputs = runs.map((r) => r.input as number);
  expect(new Set(inputs).size).toBe(inputs.length);
}

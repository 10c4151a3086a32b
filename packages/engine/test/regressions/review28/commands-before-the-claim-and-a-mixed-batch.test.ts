import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Database } from '../../../src/db/database.ts';
import { TestClock } from '../../../src/testing/test-clock.ts';
import { stepHistory } from '../../support/step-history.ts';
import { openTestDatabase, testDbKind } from '../../support/test-database.ts';
import { bareEngine } from '../harness.ts';
import { assertRunGuarantees, claimFor, drain, runJob } from './support/invariants.ts';
import { actions, effectsOf, otherFlow, twoSteps } from './support/flows.ts';

/**
 * Attacks 1 (before the claim), 5 and 6: a command committed on the Pending run before any pool
 * claimed it; one claim batch mixing runs the worker can mark with runs of a flow it lacks and runs
 * whose run timeout or cleanup window is due exactly at the claim's now; a run parked stuck Waiting
 * by a worker without its flow, later kicked (not Pending: the claim must leave it to the load).
 */
const flows = [twoSteps, otherFlow];
const names = flows.map((f) => f.name);

describe(`commands before the claim, and a mixed claim batch (${testDbKind()})`, () => {
  let db: Database;
  const clock = new TestClock();
  beforeAll(async () => {
    db = await openTestDatabase();
  });
  afterAll(async () => {
    await db.close();
  });
  const engine = (fl = flows) => bareEngine(db, { flows: fl, actions, clock });
  const status = async (runId: string) => (await db.prisma.flowRun.findUniqueOrThrow({ where: { id: runId } })).status;
  const clearQueue = () => db.prisma.job.deleteMany({});

  it('cancel committed on the Pending run before the claim: the claim marks it, the replay runs no action', async () => {
    await clearQueue();
    const tag = 'before-claim-cancel';
    const s = engine();
    const { runId } = await s.startFlow(twoSteps, tag);
    await s.cancel(runId, { reason: 'before', cleanupSeconds: 60 });
    const worker = engine();
    const jobs = await claimFor(worker, clock, names);
    const marked = jobs.filter((j) => j.loaded);
    expect(marked.map((j) => j.loaded?.run.cancel_requested_at !== null)).toEqual([true]);
    for (const j of jobs) await runJob(worker, j);
    await drain(worker, clock, names);
    clock.advance(61_000);
    await drain(worker, clock, names);
    expect(await status(runId), (await stepHistory(db, runId)).join(', ')).toBe('Cancelled');
    expect([...effectsOf(tag).entries()]).toEqual([]);
    await assertRunGuarantees(db, runId, { effects: effectsOf(tag), expectTerminal: true });
  });

  it('business deadline swept while the run is Pending, before the claim: expired, no action runs', async () => {
    await clearQueue();
    const tag = 'before-claim-expired';
    const s = engine();
    const { runId } = await s.startFlow(twoSteps, tag, { expiresInSeconds: 5 });
    clock.advance(6_000);
    await s.sweepExpiredRuns();
    const worker = engine();
    for (const j of await claimFor(worker, clock, names)) await runJob(worker, j);
    await drain(worker, clock, names);
    clock.advance(3600_000);
    await drain(worker, clock, names);
    expect(await status(runId), (await stepHistory(db, runId)).join(', ')).toBe('Expired');
    expect([...effectsOf(tag).entries()]).toEqual([]);
    await assertRunGuarantees(db, runId, { effects: effectsOf(tag), expectTerminal: true });
  });

  it('terminated while Pending, before the claim: the claim does not mark it, nothing runs or is written after', async () => {
    await clearQueue();
    const tag = 'before-claim-terminate';
    const s = engine();
    const { runId } = await s.startFlow(twoSteps, tag);
    await s.terminate(runId, { reason: 'before' });
    const before = await stepHistory(db, runId);
    const worker = engine();
    const jobs = await claimFor(worker, clock, names);
    expect(jobs.filter((j) => j.loaded)).toEqual([]);
    for (const j of jobs) expect(await runJob(worker, j)).toBe('not-open');
    expect(await stepHistory(db, runId)).toEqual(before);
    expect([...effectsOf(tag).entries()]).toEqual([]);
    await assertRunGuarantees(db, runId, { effects: effectsOf(tag), expectTerminal: true });
  });

  it('one batch: marked runs, a flow the worker lacks, a run timeout and a cleanup window due exactly at now', async () => {
    await clearQueue();
    const s = engine();
    const t0 = clock.now();
    const { runId: plain } = await s.startFlow(twoSteps, 'mixed-plain');
    const { runId: lacking } = await s.startFlow(otherFlow, 'mixed-lacking');
    const { runId: timeout } = await s.startFlow(twoSteps, 'mixed-timeout', { runTimeoutSeconds: 10 });
    const { runId: window } = await s.startFlow(twoSteps, 'mixed-window');
    await s.cancel(window, { reason: 'window', cleanupSeconds: 10 });
    const { runId: plain2 } = await s.startFlow(twoSteps, 'mixed-plain2');
    // Exactly at the run timeout and at the cleanup window's close.
    clock.set(new Date(t0.getTime() + 10_000));
    expect(clock.now().getTime()).toBe(t0.getTime() + 10_000);
    const worker = engine([twoSteps]);
    const jobs = await claimFor(worker, clock, [twoSteps.name], 20);
    const markedRuns = jobs.filter((j) => j.loaded).map((j) => j.run_id);
    expect(markedRuns.sort()).toEqual([plain, plain2].sort());
    expect(await status(lacking)).toBe('Pending');
    expect(await status(timeout)).toBe('Pending');
    expect(await status(window)).toBe('Pending');
    for (const j of jobs) await runJob(worker, j);
    await drain(worker, clock, [twoSteps.name]);
    expect(await status(plain)).toBe('Completed');
    expect(await status(plain2)).toBe('Completed');
    expect(await status(timeout)).toBe('TimedOut');
    expect(await status(window)).toBe('Cancelled');
    // The run of the flow the worker lacks: parked stuck (Waiting), never invisible.
    const parked = await db.prisma.flowRun.findUniqueOrThrow({ where: { id: lacking } });
    expect([parked.status, parked.stuck_reason?.startsWith('unknown_flow')]).toEqual(['Waiting', true]);
    await assertRunGuarantees(db, lacking, { effects: effectsOf('mixed-lacking') });
    // Kicked, a worker that has the flow: not Pending, so its claim leaves it to the load; one run.running.
    await s.kick(lacking);
    const full = engine();
    const kicked = await claimFor(full, clock, names);
    expect(kicked.filter((j) => j.run_id === lacking && j.loaded)).toEqual([]);
    for (const j of kicked) await runJob(full, j);
    await drain(full, clock, names);
    expect(await status(lacking), (await stepHistory(db, lacking)).join(', ')).toBe('Completed');
    for (const [runId, tag] of [
      [plain, 'mixed-plain'],
      [plain2, 'mixed-plain2'],
      [lacking, 'mixed-lacking'],
      [timeout, 'mixed-timeout'],
      [window, 'mixed-window'],
    ] as const)
      await assertRunGuarantees(db, runId, { effects: effectsOf(tag), expectTerminal: true });
    expect([...effectsOf('mixed-timeout').entries()]).toEqual([]);
    expect([...effectsOf('mixed-window').entries()]).toEqual([]);
  });
});

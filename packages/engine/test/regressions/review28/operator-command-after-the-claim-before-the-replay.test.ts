import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Database } from '../../../src/db/database.ts';
import { TestClock } from '../../../src/testing/test-clock.ts';
import { stepHistory } from '../../support/step-history.ts';
import { openTestDatabase, testDbKind } from '../../support/test-database.ts';
import { bareEngine } from '../harness.ts';
import { assertRunGuarantees, claimFor, drain, runJob } from './support/invariants.ts';
import { actions, effectsOf, otherFlow, twoSteps } from './support/flows.ts';

/**
 * Attack 1, after the claim: the claim marked the Pending run Running and handed its row (as it was,
 * before the command) to the job; an operator command commits before the replay runs; the replay
 * then starts from the claim's row with no load. The command must be honoured.
 */
const flows = [twoSteps, otherFlow];
const names = flows.map((f) => f.name);

describe(`an operator command between the claim that marked a Pending run and its replay (${testDbKind()})`, () => {
  let db: Database;
  const clock = new TestClock();
  beforeAll(async () => {
    db = await openTestDatabase();
  });
  afterAll(async () => {
    await db.close();
  });
  const starter = () => bareEngine(db, { flows, actions, clock });

  /** Starts a run where no pool runs, claims its wake (marked), and returns the job with its row. */
  const startAndClaim = async (tag: string) => {
    const s = starter();
    const { runId } = await s.startFlow(twoSteps, tag);
    const worker = bareEngine(db, { flows, actions, clock });
    const [job] = await claimFor(worker, clock, names);
    expect(job?.run_id).toBe(runId);
    expect(job?.loaded?.activeVersion).not.toBeNull();
    return { s, worker, job: job!, runId };
  };

  it('cancel: the replay from the claimed row runs no action after the cancel committed', async () => {
    const tag = 'after-claim-cancel';
    const { s, worker, job, runId } = await startAndClaim(tag);
    expect((await s.cancel(runId, { reason: 'operator', cleanupSeconds: 60 })).requested).toBe(true);
    await runJob(worker, job);
    await drain(worker, clock, names);
    clock.advance(61_000);
    await drain(worker, clock, names);
    const run = await db.prisma.flowRun.findUniqueOrThrow({ where: { id: runId } });
    expect(run.status, (await stepHistory(db, runId)).join(', ')).toBe('Cancelled');
    expect([...effectsOf(tag).entries()], 'actions ran after the cancel committed').toEqual([]);
    await assertRunGuarantees(db, runId, { effects: effectsOf(tag), expectTerminal: true });
  });

  it('terminate: the replay from the claimed row runs nothing and writes nothing after the end', async () => {
    const tag = 'after-claim-terminate';
    const { s, worker, job, runId } = await startAndClaim(tag);
    expect((await s.terminate(runId, { reason: 'operator' })).terminated).toBe(true);
    await runJob(worker, job);
    await drain(worker, clock, names);
    expect((await db.prisma.flowRun.findUniqueOrThrow({ where: { id: runId } })).status).toBe('Terminated');
    expect([...effectsOf(tag).entries()], 'actions ran after terminate').toEqual([]);
    await assertRunGuarantees(db, runId, { effects: effectsOf(tag), expectTerminal: true });
  });

  it('repair run.terminate drafted against the Running run: honoured, nothing runs after', async () => {
    const tag = 'after-claim-repair-terminate';
    const { s, worker, job, runId } = await startAndClaim(tag);
    const applied = await s.repairs.apply({
      kind: 'run.terminate',
      target: { runId },
      expected: { runStatus: 'Running' },
      actor: 'r28',
      reason: 'repair terminate',
      idempotencyKey: `r28-${runId}`,
    });
    expect(JSON.stringify(applied)).not.toMatch(/refused|stale|conflict/i);
    await runJob(worker, job);
    await drain(worker, clock, names);
    expect((await db.prisma.flowRun.findUniqueOrThrow({ where: { id: runId } })).status).toBe('Terminated');
    expect([...effectsOf(tag).entries()]).toEqual([]);
    await assertRunGuarantees(db, runId, { effects: effectsOf(tag), expectTerminal: true });
  });

  it('repair run.cancel: honoured, no action after it', async () => {
    const tag = 'after-claim-repair-cancel';
    const { s, worker, job, runId } = await startAndClaim(tag);
    await s.repairs.apply({
      kind: 'run.cancel',
      target: { runId },
      expected: { runStatus: 'Running' },
      cleanupSeconds: 30,
      actor: 'r28',
      reason: 'repair cancel',
      idempotencyKey: `r28-${runId}`,
    });
    await runJob(worker, job);
    await drain(worker, clock, names);
    clock.advance(31_000);
    await drain(worker, clock, names);
    expect((await db.prisma.flowRun.findUniqueOrThrow({ where: { id: runId } })).status).toBe('Cancelled');
    expect([...effectsOf(tag).entries()]).toEqual([]);
    await assertRunGuarantees(db, runId, { effects: effectsOf(tag), expectTerminal: true });
  });

  it('repair run.expire: the run is expired, no action after it', async () => {
    const tag = 'after-claim-repair-expire';
    const { s, worker, job, runId } = await startAndClaim(tag);
    await s.repairs.apply({
      kind: 'run.expire',
      target: { runId },
      expected: { runStatus: 'Running' },
      cleanupSeconds: 30,
      actor: 'r28',
      reason: 'repair expire',
      idempotencyKey: `r28-${runId}`,
    });
    await runJob(worker, job);
    await drain(worker, clock, names);
    clock.advance(31_000);
    await drain(worker, clock, names);
    expect((await db.prisma.flowRun.findUniqueOrThrow({ where: { id: runId } })).status).toBe('Expired');
    expect([...effectsOf(tag).entries()]).toEqual([]);
    await assertRunGuarantees(db, runId, { effects: effectsOf(tag), expectTerminal: true });
  });

  it('business deadline passed and swept between the claim and the replay: expired, no action after', async () => {
    const tag = 'after-claim-deadline';
    const s = starter();
    const { runId } = await s.startFlow(twoSteps, tag, { expiresInSeconds: 5 });
    const worker = bareEngine(db, { flows, actions, clock });
    const [job] = await claimFor(worker, clock, names);
    expect(job?.loaded).toBeDefined();
    clock.advance(6_000);
    await s.sweepExpiredRuns();
    const swept = await db.prisma.flowRun.findUniqueOrThrow({ where: { id: runId } });
    expect(swept.expired_at).not.toBeNull();
    await runJob(worker, job!);
    await drain(worker, clock, names);
    clock.advance(3600_000);
    await drain(worker, clock, names);
    const run = await db.prisma.flowRun.findUniqueOrThrow({ where: { id: runId } });
    expect(run.status, (await stepHistory(db, runId)).join(', ')).toBe('Expired');
    expect([...effectsOf(tag).entries()]).toEqual([]);
    await assertRunGuarantees(db, runId, { effects: effectsOf(tag), expectTerminal: true });
  });

  it('kick between the claim and the replay: both wakes replay it, one outcome per step, one run.running', async () => {
    const tag = 'after-claim-kick';
    const { s, worker, job, runId } = await startAndClaim(tag);
    await s.kick(runId);
    const second = bareEngine(db, { flows, actions, clock });
    const kicks = await claimFor(second, clock, names);
    // Both replays at once: the claimed row's and the kick's load.
    await Promise.all([runJob(worker, job), ...kicks.map((k) => runJob(second, k))]);
    await drain(worker, clock, names);
    expect((await db.prisma.flowRun.findUniqueOrThrow({ where: { id: runId } })).status).toBe('Completed');
    await assertRunGuarantees(db, runId, { effects: effectsOf(tag), expectTerminal: true });
    expect([...effectsOf(tag).entries()]).toEqual([
      [1, 1],
      [2, 1],
    ]);
  });
});

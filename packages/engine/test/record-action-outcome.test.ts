import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Database } from '../src/db/database.ts';
import { claimActionRun } from '../src/store/claim-action-run.ts';
import { insertActionRun } from '../src/store/insert-action-run.ts';
import { insertFlowRun } from '../src/store/insert-flow-run.ts';
import { recordActionOutcome } from '../src/store/record-action-outcome.ts';
import { openTestDatabase, testDbKind } from './support/test-database.ts';

describe(`the recorder's fence (${testDbKind()})`, () => {
  let db: Database;
  beforeAll(async () => {
    db = await openTestDatabase();
  });
  afterAll(async () => {
    await db.close();
  });

  async function aStep(reclaimAfterSeconds: number | null = null) {
    const runId = await insertFlowRun(db.prisma, {
      flowName: 'f',
      flowVersion: 1,
      input: {},
      businessKey: null,
      tags: [],
    });
    await insertActionRun(db.prisma, { runId, sequence: 1, name: 'a', input: {}, maxAttempts: 1 });
    const row = await db.prisma.actionRun.update({
      where: { run_id_sequence: { run_id: runId, sequence: 1 } },
      data: { reclaim_stale_after_seconds: reclaimAfterSeconds },
    });
    return row.id;
  }

  it('a straggler whose claim was superseded cannot record its outcome', async () => {
    const id = await aStep(1);
    const first = await claimActionRun(db.prisma, { id, workerId: 'w1' });
    expect(first).toBe(1);
    // Let the reclaim deadline pass, then a second worker takes the row over.
    await db.prisma.actionRun.update({ where: { id }, data: { reclaim_stale_at: new Date(Date.now() - 1000) } });
    const second = await claimActionRun(db.prisma, { id, workerId: 'w2' });
    expect(second).toBe(2);
    expect(
      await recordActionOutcome(db.prisma, { id, attempts: 2, outcome: { kind: 'completed', output: { by: 'w2' } } }),
    ).toBe(true);
    expect(
      await recordActionOutcome(db.prisma, { id, attempts: 1, outcome: { kind: 'completed', output: { by: 'w1' } } }),
    ).toBe(false);
    expect(await db.prisma.actionRun.findUnique({ where: { id } })).toMatchObject({
      status: 'Completed',
      output: { by: 'w2' },
      attempts: 2,
    });
  });

  it("a straggler's late success does not overwrite Expired", async () => {
    const id = await aStep();
    const attempts = await claimActionRun(db.prisma, { id, workerId: 'w1' });
    // The monitor settles the step without claiming it (it does not touch attempts).
    await db.prisma.actionRun.update({ where: { id }, data: { status: 'Expired' } });
    expect(
      await recordActionOutcome(db.prisma, { id, attempts: attempts ?? 0, outcome: { kind: 'completed', output: 1 } }),
    ).toBe(false);
    expect(await db.prisma.actionRun.findUnique({ where: { id } })).toMatchObject({ status: 'Expired', output: null });
  });

  it('a live Running row is not claimable; with reclaim off it never becomes claimable', async () => {
    const id = await aStep(null);
    expect(await claimActionRun(db.prisma, { id, workerId: 'w1' })).toBe(1);
    expect(await claimActionRun(db.prisma, { id, workerId: 'w2' })).toBeNull();
    await db.prisma.actionRun.update({ where: { id }, data: { updated_at: new Date(0), started_at: new Date(0) } });
    expect(await claimActionRun(db.prisma, { id, workerId: 'w2' })).toBeNull();
  });

  it('a completed step is never claimed again', async () => {
    const id = await aStep(1);
    const a = await claimActionRun(db.prisma, { id, workerId: 'w1' });
    await recordActionOutcome(db.prisma, { id, attempts: a ?? 0, outcome: { kind: 'completed', output: 'done' } });
    expect(await claimActionRun(db.prisma, { id, workerId: 'w2' })).toBeNull();
  });
});

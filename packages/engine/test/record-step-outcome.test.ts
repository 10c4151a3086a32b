import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Database } from '../src/db/database.ts';
import { claimStep } from '../src/store/claim-step.ts';
import { recordStepOutcome } from '../src/store/record-step-outcome.ts';
import { seedStep } from './support/seed-step.ts';
import { openTestDatabase, testDbKind } from './support/test-database.ts';

describe(`the recorder's fence (${testDbKind()})`, () => {
  let db: Database;
  beforeAll(async () => {
    db = await openTestDatabase();
  });
  afterAll(async () => {
    await db.close();
  });
  const t = (offsetMs = 0) => new Date(Date.now() + offsetMs);
  const claim = (id: string, workerId: string, now = t()) =>
    claimStep(db.prisma, { table: 'action_runs', id, workerId, now });
  const complete = (id: string, attempts: number, output: unknown, now = t()) =>
    recordStepOutcome(db.prisma, {
      table: 'action_runs',
      id,
      attempts,
      outcome: { kind: 'completed', output: output as never },
      now,
    });
  const row = (id: string) => db.prisma.actionRun.findUniqueOrThrow({ where: { id } });

  it("a straggler's stale result does not replace the current one", async () => {
    const { id } = await seedStep(db, { reclaimAfterSeconds: 1 });
    expect(await claim(id, 'w1')).toBe(1);
    // w1 looks dead: its reclaim deadline passes and w2 takes the row over.
    expect(await claim(id, 'w2', t(2000))).toBe(2);
    expect(await complete(id, 2, { by: 'w2' })).toBe('recorded');
    expect(await complete(id, 1, { by: 'w1' })).toBe('rejected');
    expect(await row(id)).toMatchObject({ status: 'Completed', output: { by: 'w2' }, attempts: 2 });
  });

  it('a straggler that throws after the live worker completed does not flip the step to Failed', async () => {
    const { id } = await seedStep(db, { reclaimAfterSeconds: 1, maxAttempts: 3 });
    await claim(id, 'w1');
    await claim(id, 'w2', t(2000));
    expect(await complete(id, 2, 'ok')).toBe('recorded');
    const late = await recordStepOutcome(db.prisma, {
      table: 'action_runs',
      id,
      attempts: 1,
      outcome: { kind: 'errored', error: { message: 'late' } },
      now: t(),
    });
    expect(late).toBe('rejected');
    expect(await row(id)).toMatchObject({ status: 'Completed', output: 'ok', error: null });
  });

  it("a late completion vs an expiry write: a straggler's late success does not overwrite Expired", async () => {
    const { id } = await seedStep(db);
    const attempts = (await claim(id, 'w1')) ?? 0;
    // The monitor settles the step without claiming it (conditional on Running, attempts untouched).
    const expired = await db.prisma.actionRun.updateMany({
      where: { id, status: 'Running' },
      data: { status: 'Expired' },
    });
    expect(expired.count).toBe(1);
    expect(await complete(id, attempts, 1)).toBe('rejected');
    expect(await row(id)).toMatchObject({ status: 'Expired', output: null });
  });

  it('a late completion vs an expiry write, other order: a completion just before the sweep is not demoted', async () => {
    const { id } = await seedStep(db);
    const attempts = (await claim(id, 'w1')) ?? 0;
    expect(await complete(id, attempts, 'done')).toBe('recorded');
    const expired = await db.prisma.actionRun.updateMany({
      where: { id, status: 'Running' },
      data: { status: 'Expired' },
    });
    expect(expired.count).toBe(0);
    expect(await row(id)).toMatchObject({ status: 'Completed', output: 'done' });
  });

  it('a live Running row is not claimable; with reclaim off it never becomes claimable', async () => {
    const { id } = await seedStep(db, { reclaimAfterSeconds: null });
    expect(await claim(id, 'w1')).toBe(1);
    expect(await claim(id, 'w2')).toBeNull();
    expect(await claim(id, 'w2', t(365 * 86_400_000))).toBeNull();
  });

  it('a completed step is never claimed again, even past its reclaim window', async () => {
    const { id } = await seedStep(db, { reclaimAfterSeconds: 1 });
    const a = (await claim(id, 'w1')) ?? 0;
    await complete(id, a, 'done');
    expect(await claim(id, 'w2', t(10_000))).toBeNull();
  });

  it('a write to a step whose run has finished is refused, and a claim on it fails', async () => {
    const { id, runId } = await seedStep(db, { reclaimAfterSeconds: 1 });
    const a = (await claim(id, 'w1')) ?? 0;
    await db.prisma.flowRun.update({ where: { id: runId }, data: { status: 'Terminated' } });
    expect(await complete(id, a, 'late')).toBe('refused');
    expect(await claim(id, 'w2', t(10_000))).toBeNull();
    expect(await row(id)).toMatchObject({ status: 'Running', output: null });
  });
});

import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Database } from '../../../src/db/database.ts';
import { beatWorker } from '../../../src/store/beat-worker.ts';
import { findOrphanedSteps } from '../../../src/store/find-orphaned-steps.ts';
import { createTestEngine, type TestEngine } from '../../../src/testing/create-test-engine.ts';
import { seedStep } from '../../support/seed-step.ts';
import { openTestDatabase } from '../../support/test-database.ts';
import { waitFor } from '../../support/wait-for.ts';

const day = 86_400;

/**
 * Review 61, held, on ADR 0133: "A row that a Running step or compensation still names as its `claimed_by`
 * is kept whatever its age … A pool that was only paused (a stopped VM) past the cutoff and then beats
 * again writes its row anew … Its claims in between are judged by their age."
 *
 * The race the check cannot see: a pool paused for 40 days resumes and claims a step; its claim is not yet
 * committed when the prune reads the Running steps, so the prune deletes its row. Is the step then judged
 * `owner_gone` (and reclaimed: run twice) while its owner is alive, and does the pool's next beat restore
 * its row?
 */
describe('review 61: pruning a paused pool racing its claim (real PostgreSQL)', () => {
  let db: Database & { url?: string };
  let t: TestEngine;
  beforeAll(async () => {
    db = await openTestDatabase({ poolSize: 6 });
    t = await createTestEngine({ db, flows: [], actions: [] });
  });
  afterAll(async () => {
    await t?.close();
    await db?.close();
  });

  it('the claimed step is judged by its age, not gone, and the next beat writes the row again', async () => {
    await db.prisma.$executeRawUnsafe(`
      insert into "sagaflow"."workers" (id, started_at, heartbeat_at)
      values ('w-paused', now() - interval '60 days', now() - interval '40 days')`);
    const step = await seedStep(db);
    // The pool resumes and claims the step; its claim transaction has not committed yet.
    let commit!: () => void;
    const committed = new Promise<void>((r) => (commit = r));
    let claimed = false;
    const claim = db.prisma.$transaction(
      async (tx) => {
        await tx.$executeRaw`
          update "sagaflow"."action_runs"
             set status = 'Running', claimed_by = 'w-paused', attempts = attempts + 1, updated_at = now()
           where id = ${step.id}::uuid`;
        claimed = true;
        await committed;
      },
      { timeout: 20_000 },
    );
    await waitFor('the claim to be written', () => Promise.resolve(claimed ? true : undefined));
    const preview = await t.engine.retention.preview({ olderThanSeconds: 30 * day });
    const report = await t.engine.retention.prune({ olderThanSeconds: 30 * day });
    commit();
    await claim;
    const rows = async () =>
      (await db.prisma.$queryRaw<{ id: string }[]>`select id from "sagaflow"."workers" where id = 'w-paused'`).length;
    // The race went as described: the dry run counted the row and the prune deleted it under the claim.
    expect({ counted: preview.rows.workers, deleted: report.deleted.workers, row: await rows() }).toEqual({
      counted: 1,
      deleted: 1,
      row: 0,
    });
    // Its owner alive, the step is not judged gone (it was claimed just now).
    const orphans = await findOrphanedSteps(db.prisma, { deadAfterSeconds: 30, rowId: step.id, limit: 10 });
    expect(orphans).toEqual([]);
    // The next beat writes the row again, and the step's owner is known alive.
    await beatWorker(db.prisma, { workerId: 'w-paused' });
    expect(await rows()).toBe(1);
    expect(await findOrphanedSteps(db.prisma, { deadAfterSeconds: 30, rowId: step.id, limit: 10 })).toEqual([]);
  });
});

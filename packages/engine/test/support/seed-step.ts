import type { Database } from '../../src/db/database.ts';
import { insertFlowRun } from '../../src/store/insert-flow-run.ts';
import { insertStep } from '../../src/store/insert-step.ts';

/** A run with one Pending action row, written straight to the store, for recorder-level tests. */
export async function seedStep(db: Database, opts: { reclaimAfterSeconds?: number | null; maxAttempts?: number } = {}) {
  const now = new Date();
  const runId = await insertFlowRun(db.prisma, {
    flowName: 'f',
    flowVersion: 1,
    input: {},
    businessKey: null,
    tags: [],
    expiresAt: null,
    runTimeoutAt: null,
    now,
  });
  const row = await insertStep(db.prisma, {
    runId,
    sequence: 1,
    kind: 'action',
    name: 'a',
    input: {},
    maxAttempts: opts.maxAttempts ?? 1,
    reclaimAfterSeconds: opts.reclaimAfterSeconds ?? null,
  });
  return { runId, id: row.id };
}

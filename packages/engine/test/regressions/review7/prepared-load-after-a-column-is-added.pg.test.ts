import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Database } from '../../../src/db/database.ts';
import { defineAction, defineFlow } from '../../../src/index.ts';
import { openTestDatabase } from '../../support/test-database.ts';
import { waitFor } from '../../support/wait-for.ts';
import { bareEngine } from '../harness.ts';

const double = defineAction({ name: 'review7-double', run: async (n: number) => n * 2 });
const flow = defineFlow({
  name: 'review7-column-added',
  version: 1,
  run: async (ctx, n: number) => ctx.action(double, n),
});

/**
 * Review of ADR 0039. A run's statements are prepared by name once per connection and kept for the
 * connection's life. The load reads `flow_runs` whole (`select p.*`): once a column is added to the
 * table (a migration applied while workers run, as ADR 0040's rolling upgrade does), PostgreSQL
 * refuses the prepared statement ("cached plan must not change result type", 0A000) on every
 * connection that prepared it, where Prisma's unnamed statements just re-planned. The replay failed
 * and its run waited out its job's lease (here an hour): it must run at once.
 */
describe('a replay whose load was prepared before a column was added to flow_runs (postgres)', () => {
  let db: Database;
  beforeAll(async () => {
    // One connection: the second run's load meets the statement the first run's load prepared.
    db = await openTestDatabase({ poolSize: 1 });
  });
  afterAll(async () => {
    await db.close();
  });

  it('is planned afresh and the run completes without waiting out its lease', async () => {
    const e = bareEngine(db, { flows: [flow], actions: [double], config: { worker: { lease_seconds: 3600 } } });
    const completed = (runId: string) =>
      waitFor(`run ${runId} completes`, async () => {
        const r = await e.getRun(runId);
        return r?.run.status === 'Completed' ? r.run : undefined;
      });
    // Started with no pool running: no hand-off (ADR 0041), so the worker's replay loads the run.
    const first = await e.startFlow(flow, 1);
    e.startWorkers();
    expect((await completed(first.runId)).output).toBe(2);
    await e.stopWorkers();

    await db.prisma.$executeRawUnsafe(`alter table "sagaflow"."flow_runs" add column review7_note text`);

    const second = await e.startFlow(flow, 2);
    e.startWorkers();
    expect((await completed(second.runId)).output).toBe(4);
    await e.stopWorkers();
  });
});

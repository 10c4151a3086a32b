import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createDatabase } from '../../../src/db/create-database.ts';
import type { Database } from '../../../src/db/database.ts';
import { createTestEngine, type TestEngine } from '../../../src/testing/create-test-engine.ts';
import { TestClock } from '../../../src/testing/test-clock.ts';
import { runMonitorPass } from '../../../src/worker/start-monitor.ts';
import { openTestDatabase } from '../../support/test-database.ts';
import { fenceOnly, insertRun, parked } from './support/tree.ts';

/**
 * Review 67, HELD: ADR 0140 §1 ("under the monitor lease"): two replicas' monitors, both past the grace, pass
 * back to back at once over a terminate stopped after its fence (P → 300 children). Each pass either sweeps
 * (holding the lease) or is refused; the swept passes end the 300 between them, each run Terminated with one
 * `run.terminated`, and a last pass of each finds nothing.
 */
describe('held: two replicas’ monitors finish a stopped terminate once (postgres)', () => {
  let dbA: Database & { url?: string };
  let dbB: Database;
  let a: TestEngine;
  let b: TestEngine;
  beforeEach(async () => {
    dbA = await openTestDatabase({ poolSize: 6 });
    dbB = await createDatabase({ kind: 'postgres', url: dbA.url!, poolSize: 6 });
    const config = { monitor: { unfinished_terminate_after_seconds: 60 } };
    a = await createTestEngine({ db: dbA, flows: [parked], actions: [], config });
    b = await createTestEngine({ db: dbB, flows: [parked], actions: [], config, clock: new TestClock(a.clock.now()) });
  });
  afterEach(async () => {
    await a?.close();
    await b?.close();
    await dbB?.close();
    await dbA?.close();
  });

  it('the 300 runs are ended once between them', async () => {
    const p = await insertRun(dbA);
    await dbA.prisma.$executeRaw`
      insert into "sagaflow"."flow_runs" (flow_name, flow_version, status, input, parent_run_id, parent_sequence, parent_cancel_policy)
      select ${parked.name}, 1, 'Waiting', 'null'::jsonb, ${p}::uuid, g, 'propagate' from generate_series(1, 300) g`;
    a.clock.advance(1000);
    expect(await fenceOnly(a, dbA, p, 'stopped by ops')).toBe(300);
    a.clock.advance(65_000);
    b.clock.advance(70_000);

    const counts = { a: 0, b: 0, refused: 0 };
    const loop = async (e: TestEngine, who: 'a' | 'b') => {
      for (let i = 0; i < 8; i++) {
        const r = await runMonitorPass(e.engine.runtime, { doctor: false, ttlSeconds: 60, release: true });
        if (!r.swept) counts.refused++;
        else counts[who] += r.terminates?.terminated ?? 0;
      }
    };
    await Promise.all([loop(a, 'a'), loop(b, 'b')]);
    console.log(`review67 two monitors: ${JSON.stringify(counts)}`);
    expect(counts.a + counts.b).toBe(300);

    const [row] = await dbA.prisma.$queryRaw<{ terminated: number; one_event: number }[]>`
      select count(*) filter (where r.status = 'Terminated')::int as terminated,
             count(*) filter (where (select count(*) from "sagaflow"."flow_events" e
                                      where e.run_id = r.id and e.type = 'run.terminated') = 1)::int as one_event
        from "sagaflow"."flow_runs" r where r.parent_run_id = ${p}::uuid`;
    expect(row).toEqual({ terminated: 300, one_event: 300 });
  });
});

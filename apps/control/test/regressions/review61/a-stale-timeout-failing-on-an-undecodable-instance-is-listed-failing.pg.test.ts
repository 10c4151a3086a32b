import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import '../../provided-context.ts';
import { testDatabaseUrl } from '../../support/test-plane.ts';
import { pageInstances, pageInstancesInput } from '../../../src/api/instances/page-instances.ts';
import { readOverview } from '../../../src/api/overview/read-overview.ts';
import { parseEnv } from '../../../src/env.ts';
import { readFailingCounts } from '../../../src/metrics/reads/read-failing-counts.ts';
import { startControlPlane, type ControlPlane } from '../../../src/start-control-plane.ts';

/**
 * Review 61, D2's control-plane reads (ADR 0134 §5: "This covers `find`, `findByStatus`, the failing filter,
 * the overview and `/metrics`"). The engine test
 * `packages/engine/test/regressions/review61/a-stale-timeout-that-fails-on-an-undecodable-instance-still-shows-failing.test.ts`
 * showed that a stale timeout of an instance whose stored state no longer decodes failed at every try
 * (`stored state no longer decodes`), never a no-op, so the reads that count only live timeouts hid a timeout
 * that kept failing. Fixed in the engine (ADR 0134's second addendum): a stale timeout is judged before the
 * state is decoded and is delivered as a no-op at its next try. Rows such a timeout left behind before the fix
 * (written here as that test left them: the instance moved on to `Cancelling`, visit 1, its `CloseIdle`,
 * expecting `Open` in visit 0, Pending after two failed tries) are therefore not a failing instance: the
 * instances list's `failingOnly`, the overview and /metrics agree with the engine's `find` and leave it out,
 * and its next try delivers it as a no-op.
 */
describe('review 61: an instance whose stale timeout fails on its undecodable state, in the control plane (PostgreSQL)', () => {
  let plane: ControlPlane;
  let id = '';
  beforeAll(async () => {
    plane = await startControlPlane(
      parseEnv({ DATABASE_URL: await testDatabaseUrl('r61_undecodable'), CONTROL_PORT: '0', LOG_LEVEL: 'silent' }),
    );
    const rows = await plane.db.driver.query<{ id: string }>(`
      with s as (
        insert into "sagaflow"."saga_instances" (process_name, correlation_key, status, current_state, state, state_visit)
        values ('r61-basket', 'b-1', 'ACTIVE', 'Cancelling', '{"key":"b-1","items":[]}'::jsonb, 1)
        returning id)
      insert into "sagaflow"."process_timeouts" (instance_id, name, expected_state, armed_visit, due_at, attempts,
                                                 last_error, first_failed_at, retry_at)
      select id, 'CloseIdle', 'Open', 0, now() - interval '2 minutes', 2,
             'instance ' || id || ' of "r61-basket": stored state no longer decodes (currency: Invalid input: expected string, received undefined)',
             now() - interval '1 minute', now() + interval '2 minutes'
        from s
      returning instance_id::text as id`);
    id = rows[0]!.id;
  }, 60_000);
  afterAll(async () => {
    await plane?.stop();
  });

  it('failingOnly, the overview and the metrics read agree: a stale timeout is not a failing one', async () => {
    const page = await pageInstances(
      { db: plane.db },
      pageInstancesInput.parse({ processName: 'r61-basket', status: ['ACTIVE'], failingOnly: true }),
    );
    const overview = await readOverview(plane.db);
    const metrics = await readFailingCounts(plane.db.prisma);
    expect({
      failingOnly: page.items.map((i) => i.id),
      overviewFailing: overview.instances.failing,
      overviewFailingTimeouts: overview.instances.failingTimeouts,
      metricsRows: metrics.length,
    }).toEqual({ failingOnly: [], overviewFailing: 0, overviewFailingTimeouts: 0, metricsRows: 0 });
    expect(id).not.toBe('');
  });
});

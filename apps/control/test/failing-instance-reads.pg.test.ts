import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import './provided-context.ts';
import { testDatabaseUrl } from './support/test-plane.ts';
import { pageInstances, pageInstancesInput } from '../src/api/instances/page-instances.ts';
import { readOverview } from '../src/api/overview/read-overview.ts';
import { parseEnv } from '../src/env.ts';
import { readFailingCounts } from '../src/metrics/reads/read-failing-counts.ts';
import type { SqlReader } from '../src/metrics/reads/sql-reader.ts';
import { startControlPlane, type ControlPlane } from '../src/start-control-plane.ts';

const healthy = 20_000;

/** Every index a plan reads, and every table it scans whole, from EXPLAIN's JSON. */
function planNodes(plan: unknown, out = { indexes: [] as string[], seqScans: [] as string[] }) {
  if (Array.isArray(plan)) for (const p of plan) planNodes(p, out);
  else if (plan !== null && typeof plan === 'object') {
    const node = plan as Record<string, unknown>;
    if (typeof node['Index Name'] === 'string') out.indexes.push(node['Index Name']);
    if (node['Node Type'] === 'Seq Scan' && typeof node['Relation Name'] === 'string')
      out.seqScans.push(node['Relation Name']);
    for (const v of Object.values(node)) planNodes(v, out);
  }
  return out;
}

/**
 * ADR 0127: the failing instances (a failure record, or a Pending timeout that has failed) are found
 * among many healthy ones by migration 0035's partial indexes: the instances list's failingOnly
 * filter, the overview's headline and /metrics read only them.
 */
describe('failing instances are found among 20 k healthy ones by their partial indexes (PostgreSQL)', () => {
  let plane: ControlPlane;
  const failingTimerIds: string[] = [];
  const recordIds: string[] = [];
  beforeAll(async () => {
    plane = await startControlPlane(
      parseEnv({ DATABASE_URL: await testDatabaseUrl('failing_reads'), CONTROL_PORT: '0', LOG_LEVEL: 'silent' }),
    );
    // 20 k healthy ACTIVE instances, each with an armed timer; 3 whose timer has failed; 2 with a
    // failure record; 1 QUARANTINED (counted as quarantined, not failing).
    await plane.db.driver.exec(`
      with i as (
        insert into "sagaflow"."saga_instances" (process_name, correlation_key, status, current_state, state)
        select 'fr.proc', 'k-' || n, 'ACTIVE', 'Waiting', '{}'::jsonb from generate_series(1, ${healthy + 3}) n
        returning id, correlation_key)
      insert into "sagaflow"."process_timeouts" (instance_id, name, expected_state, armed_visit, due_at, attempts,
                                                 last_error, first_failed_at, retry_at)
      select id, 'late', 'Waiting', 0, now() + interval '1 day',
             case when correlation_key in ('k-1', 'k-2', 'k-3') then 4 else 0 end,
             case when correlation_key in ('k-1', 'k-2', 'k-3') then 'fr: the ledger refused' end,
             case when correlation_key in ('k-1', 'k-2', 'k-3') then now() end,
             case when correlation_key in ('k-1', 'k-2', 'k-3') then now() + interval '1 hour' end
        from i;
      insert into "sagaflow"."saga_instances" (process_name, correlation_key, status, current_state, state,
                                               failure_redelivery_key, failure_error_type, failure_message,
                                               first_failed_at)
      select 'fr.proc', 'r-' || n, case when n = 3 then 'QUARANTINED' else 'ACTIVE' end, 'Waiting', '{}'::jsonb,
             'm-' || n, 'Error', 'fr: message failed', now()
        from generate_series(1, 3) n;
      -- 1 moved on from the visit its failed timer was armed in (a forced transition, ADR 0012): stale, not failing.
      with s as (
        insert into "sagaflow"."saga_instances" (process_name, correlation_key, status, current_state, state, state_visit)
        values ('fr.proc', 's-1', 'ACTIVE', 'Shipped', '{}'::jsonb, 1)
        returning id)
      insert into "sagaflow"."process_timeouts" (instance_id, name, expected_state, armed_visit, due_at, attempts,
                                                 last_error, first_failed_at, retry_at)
      select id, 'late', 'Waiting', 0, now() + interval '1 day', 7, 'fr: the ledger refused', now(),
             now() + interval '1 hour'
        from s;
      analyze "sagaflow"."saga_instances";
      analyze "sagaflow"."process_timeouts";`);
    const ids = await plane.db.driver.query<{ id: string; key: string }>(
      `select id::text as id, correlation_key as key from "sagaflow"."saga_instances"
        where correlation_key in ('k-1', 'k-2', 'k-3', 'r-1', 'r-2')`,
    );
    for (const r of ids) (r.key.startsWith('k-') ? failingTimerIds : recordIds).push(r.id);
  }, 120_000);
  afterAll(async () => {
    await plane?.stop();
  });

  it('instances.page failingOnly lists exactly the failing ACTIVE ones, each with what it fails on', async () => {
    const page = await pageInstances(
      { db: plane.db },
      pageInstancesInput.parse({ processName: 'fr.proc', status: ['ACTIVE'], failingOnly: true }),
    );
    expect(page.items.map((i) => i.id).sort()).toEqual([...failingTimerIds, ...recordIds].sort());
    for (const i of page.items)
      if (failingTimerIds.includes(i.id))
        expect(i.failingTimeout).toMatchObject({ name: 'late', attempts: 4, lastError: 'fr: the ledger refused' });
      else expect(i.failure?.message).toBe('fr: message failed');
    expect(page.counts).toMatchObject({ ACTIVE: 5, QUARANTINED: 1, COMPLETED: 0 });
  });

  it('the overview counts them, and its read and the filter read only the partial indexes', async () => {
    const overview = await readOverview(plane.db);
    expect(overview.instances).toMatchObject({ active: healthy + 6, quarantined: 1, failing: 5, failingTimeouts: 3 });

    const explain: SqlReader = {
      $queryRaw: ((strings: TemplateStringsArray, ...values: unknown[]) =>
        plane.db.prisma.$queryRawUnsafe(
          'explain (format json) ' + strings.reduce((sql, part, i) => `${sql}$${i}${part}`),
          ...values,
        )) as never,
      $queryRawUnsafe: plane.db.prisma.$queryRawUnsafe.bind(plane.db.prisma),
    };
    const counts = planNodes(
      ((await readFailingCounts(explain)) as unknown as Record<string, unknown>[])[0]?.['QUERY PLAN'],
    );
    expect(counts.indexes).toEqual(
      expect.arrayContaining(['process_timeouts_failing_idx', 'saga_instances_failure_idx']),
    );
    expect(counts.seqScans).toEqual([]);
  });
});

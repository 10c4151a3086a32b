import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import '../../provided-context.ts';
import { apiClient, createTestOperator, signInCookie, testDatabaseUrl } from '../../support/test-plane.ts';
import { parseEnv } from '../../../src/env.ts';
import { startControlPlane, type ControlPlane } from '../../../src/start-control-plane.ts';

/**
 * Review 45, ADR 0115 §1 (held): a stale list read newest first bounds created_at by its cutoff,
 * on migration 0030's rule that updated_at is never before created_at. Attacks that held: rows
 * tied on created_at across every page boundary are each listed once; a row made fresh between
 * two pages drops out without moving any other; a row whose last update a replica with a clock
 * behind wrote "before" its creation is still listed as stale, in runs and in instances.
 */
describe('review 45 (held): stale lists newest first', () => {
  let plane: ControlPlane;
  let cookie = '';
  beforeAll(async () => {
    plane = await startControlPlane(
      parseEnv({ DATABASE_URL: await testDatabaseUrl('r45_stale'), CONTROL_PORT: '0', LOG_LEVEL: 'silent' }),
    );
    cookie = await signInCookie(plane.url, await createTestOperator(plane, 'viewer'));
  }, 120_000);
  afterAll(async () => {
    await plane?.stop();
  });

  it('runs tied on created_at are listed once each across pages; one made fresh between pages drops out alone', async () => {
    const q = plane.db.driver.query.bind(plane.db.driver);
    const stale = (
      await q<{ id: string }>(
        `insert into "sagaflow"."flow_runs" (flow_name, flow_version, status, input, created_at, updated_at)
         select 'r45.stale', 1, 'Waiting', '{}'::jsonb, '2026-01-01T00:00:00Z', '2026-01-01T00:00:00Z'
           from generate_series(1, 9) returning id::text as id`,
      )
    ).map((r) => r.id);
    // Fresh rows created at the same instant and after: the stale filter must skip them all.
    await q(
      `insert into "sagaflow"."flow_runs" (flow_name, flow_version, status, input, created_at, updated_at)
       select 'r45.stale', 1, 'Waiting', '{}'::jsonb, '2026-01-01T00:00:00Z'::timestamptz + (g % 2) * interval '1 s', now()
         from generate_series(1, 6) g`,
    );
    const api = apiClient(plane.url, cookie);
    const seen: string[] = [];
    let page = await api.runs.page.query({ flowName: 'r45.stale', staleForSeconds: 600, limit: 2 });
    seen.push(...page.items.map((r) => r.id));
    // A stale row not listed yet is updated now: it is fresh from here on.
    const refreshed = stale.find((id) => !seen.includes(id))!;
    await q(`update "sagaflow"."flow_runs" set updated_at = now(), version = version + 1 where id = $1::uuid`, [
      refreshed,
    ]);
    while (page.nextCursor) {
      page = await api.runs.page.query({
        flowName: 'r45.stale',
        staleForSeconds: 600,
        limit: 2,
        cursor: page.nextCursor,
      });
      seen.push(...page.items.map((r) => r.id));
    }
    expect(seen).toHaveLength(new Set(seen).size);
    expect([...seen].sort()).toEqual(stale.filter((id) => id !== refreshed).sort());
  });

  it('a run and an instance whose last update a replica behind wrote before their creation are listed alike newest first and stalest first', async () => {
    const q = plane.db.driver.query.bind(plane.db.driver);
    // Created 100 s ago; the last update written by a replica whose clock is 30 s behind the creator's.
    const runId = (
      await q<{ id: string }>(
        `insert into "sagaflow"."flow_runs" (flow_name, flow_version, status, input, created_at, updated_at)
         values ('r45.skew', 1, 'Waiting', '{}'::jsonb, now() - interval '100 s', now() - interval '100 s')
         returning id::text as id`,
      )
    )[0]!.id;
    const instanceId = (
      await q<{ id: string }>(
        `insert into "sagaflow"."saga_instances" (process_name, correlation_key, current_state, created_at, updated_at)
         values ('r45.skew', 'k', 'Open', now() - interval '100 s', now() - interval '100 s') returning id::text as id`,
      )
    )[0]!.id;
    await q(
      `update "sagaflow"."flow_runs" set status = 'Running', updated_at = created_at - interval '30 s', version = version + 1
        where id = $1::uuid`,
      [runId],
    );
    await q(
      `update "sagaflow"."saga_instances" set updated_at = created_at - interval '30 s', version = version + 1
        where id = $1::uuid`,
      [instanceId],
    );
    const api = apiClient(plane.url, cookie);
    const lists = async (staleForSeconds: number) => ({
      newest: (await api.runs.page.query({ flowName: 'r45.skew', staleForSeconds })).items.map((r) => r.id),
      stalest: (await api.runs.page.query({ flowName: 'r45.skew', staleForSeconds, order: 'stalest' })).items.map(
        (r) => r.id,
      ),
      instancesNewest: (
        await api.instances.page.query({ processName: 'r45.skew', staleForSeconds, order: 'newest' })
      ).items.map((i) => i.id),
      instancesStalest: (
        await api.instances.page.query({ processName: 'r45.skew', staleForSeconds, order: 'stalest' })
      ).items.map((i) => i.id),
    });
    // Cutoff 115 s ago: between the written update (130 s) and the creation (100 s). Without the
    // rule the stalest list would list them and the newest-first one (created_at <= cutoff) not.
    expect(await lists(115)).toEqual({ newest: [], stalest: [], instancesNewest: [], instancesStalest: [] });
    expect(await lists(60)).toEqual({
      newest: [runId],
      stalest: [runId],
      instancesNewest: [instanceId],
      instancesStalest: [instanceId],
    });
  });
});

import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import './provided-context.ts';
import { testDatabaseUrl, type apiClient, rejection, signedInClient } from './support/test-plane.ts';
import { parseEnv } from '../src/env.ts';
import { startControlPlane, type ControlPlane } from '../src/start-control-plane.ts';

/**
 * ADR 0035 over HTTP: a run's page carries the newest page of its history, never all of it; the
 * paging procedures reach every row; a poll carries only what is new; bad cursors get a 400 naming
 * the field and read nothing.
 */
describe('run and instance history pages over HTTP', () => {
  let plane: ControlPlane;
  let api: ReturnType<typeof apiClient>;
  let runId: string;
  let instanceId: string;

  /** Steps `from`..`to` and an event each, as a long run records them. */
  const record = (from: number, to: number) =>
    plane.db.driver.query(
      `with s as (insert into "sagaflow"."action_runs" (run_id, sequence, name, status, input, output, attempts)
                  select $1::uuid, g, 'line-' || g, 'Completed', '{}'::jsonb, jsonb_build_object('n', g), 1
                    from generate_series($2::int, $3::int) g returning id, sequence)
       insert into "sagaflow"."flow_events" (run_id, type, sequence, row_id, data)
       select $1::uuid, 'StepCompleted', s.sequence, s.id, '{}'::jsonb from s order by s.sequence`,
      [runId, from, to],
    );

  beforeAll(async () => {
    const url = await testDatabaseUrl('history_api');
    plane = await startControlPlane(parseEnv({ DATABASE_URL: url, CONTROL_PORT: '0', LOG_LEVEL: 'silent' }));
    api = await signedInClient(plane, 'viewer');
    const [run] = await plane.db.driver.query<{ id: string }>(
      `insert into "sagaflow"."flow_runs" (flow_name, flow_version, status, input)
       values ('history.long', 1, 'Running', '{}'::jsonb) returning id::text as id`,
    );
    runId = run!.id;
    // A stuck episode long before the newest page of events.
    await plane.db.driver.query(
      `insert into "sagaflow"."flow_events" (run_id, type, data)
       values ($1::uuid, 'run.stuck', '{"reason":"owner_gone: w1"}'), ($1::uuid, 'run.unstuck', '{"by":"kick"}')`,
      [runId],
    );
    await record(1, 1100);
    const [instance] = await plane.db.driver.query<{ id: string }>(
      `insert into "sagaflow"."saga_instances" (process_name, correlation_key, current_state, state)
       values ('history.process', 'k-1', 'S0', '{}'::jsonb) returning id::text as id`,
    );
    instanceId = instance!.id;
    await plane.db.driver.query(
      `insert into "sagaflow"."process_transitions" (instance_id, process_name, from_state, to_state, message_id, message_type)
       select $1::uuid, 'history.process', 'S', 'S', 'm-' || g, 'Step' from generate_series(1, 130) g`,
      [instanceId],
    );
  });
  afterAll(async () => {
    await plane.stop();
  });

  it('a run of 1,100 steps opens with its newest 50 steps and 100 events, saying older ones remain', async () => {
    const head = await api.runs.get.query({ id: runId });
    expect(head.actions.map((a) => a.sequence)).toEqual(Array.from({ length: 50 }, (_, i) => 1051 + i));
    expect(head.events).toHaveLength(100);
    expect(head.older).toEqual({ steps: true, compensations: false, events: true });
    // The stuck history is not cut by the page: its episode is carried apart, oldest first.
    expect(head.events.some((e) => e.type.startsWith('run.'))).toBe(false);
    expect(head.stuckEvents.map((e) => [e.type, e.data])).toEqual([
      ['run.stuck', { reason: 'owner_gone: w1' }],
      ['run.unstuck', { by: 'kick' }],
    ]);
  });

  it('runs.steps pages back from the head to the first step, each step once', async () => {
    const seen: number[] = [];
    let before: number | undefined = 1051;
    while (before !== undefined) {
      const page = await api.runs.steps.query({ id: runId, before, limit: 200 });
      seen.push(...page.rows.map((s) => s.sequence));
      before = page.more ? page.rows.at(-1)!.sequence : undefined;
    }
    expect(seen).toEqual(Array.from({ length: 1050 }, (_, i) => 1050 - i));
  });

  it('a poll carries the summary and only the steps and events newer than the newest held', async () => {
    const head = await api.runs.get.query({ id: runId });
    const newestEvent = head.events.at(-1)!.id;
    await record(1101, 1102);
    const changes = await api.runs.changes.query({
      id: runId,
      steps: { after: 1100, from: 1051, open: [] },
      events: { after: newestEvent, from: head.events[0]!.id },
    });
    expect(changes.run.id).toBe(runId);
    expect(changes.newSteps.rows.map((s) => s.sequence)).toEqual([1101, 1102]);
    expect(changes.newEvents.rows.map((e) => e.sequence)).toEqual([1101, 1102]);
    expect(changes.heldFrom).toEqual({ steps: 52, events: 102 });
  });

  it('an instance opens with its newest 50 transitions and instances.transitions reaches the first', async () => {
    const detail = await api.instances.get.query({ id: instanceId });
    expect(detail.history).toHaveLength(50);
    expect(detail.historyTruncated).toBe(true);
    const seen = detail.history.map((t) => t.messageId);
    let before: string | undefined = detail.history[0]!.id;
    while (before !== undefined) {
      const page = await api.instances.transitions.query({ id: instanceId, before });
      seen.unshift(...page.rows.map((t) => t.messageId));
      before = page.more ? page.rows[0]!.id : undefined;
    }
    expect(seen).toEqual(Array.from({ length: 130 }, (_, i) => `m-${i + 1}`));
  });

  it('a bad cursor gets a 400 naming the field', async () => {
    const refused = async (p: Promise<unknown>) => {
      const r = await rejection(p);
      return { status: r.status, field: r.field };
    };
    expect(await refused(api.runs.steps.query({ id: runId, before: -1 }))).toEqual({
      status: 400,
      field: 'input.before',
    });
    expect(await refused(api.runs.steps.query({ id: runId, before: 5, after: 2 }))).toEqual({
      status: 400,
      field: 'input.after',
    });
    expect(await refused(api.runs.steps.query({ id: runId, limit: 201 }))).toEqual({
      status: 400,
      field: 'input.limit',
    });
    expect(await refused(api.runs.events.query({ id: runId, before: '12a' }))).toEqual({
      status: 400,
      field: 'input.before',
    });
    expect(await refused(api.runs.events.query({ id: runId, after: '99999999999999999999' }))).toEqual({
      status: 400,
      field: 'input.after',
    });
    expect(await refused(api.runs.compensations.query({ id: runId, before: { level: 0, ordinal: 1.5 } }))).toEqual({
      status: 400,
      field: 'input.before.ordinal',
    });
    expect(await refused(api.runs.changes.query({ id: runId, steps: { open: [1, -2] } }))).toEqual({
      status: 400,
      field: 'input.steps.open.1',
    });
    expect(await refused(api.instances.transitions.query({ id: instanceId, after: '1e5' }))).toEqual({
      status: 400,
      field: 'input.after',
    });
    expect(await refused(api.runs.changes.query({ id: 'nope' }))).toEqual({ status: 400, field: 'input.id' });
  });
});

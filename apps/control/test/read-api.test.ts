import { randomUUID } from 'node:crypto';
import { createDatabase, defineAction, defineFlow } from '@sagaflow/engine';
import { createTestEngine, TestClock } from '@sagaflow/engine/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import './provided-context.ts';
import {
  apiClient,
  createTestOperator,
  rejection,
  signedInClient,
  signInCookie,
  testDatabaseUrl,
} from './support/test-plane.ts';
import { parseEnv } from '../src/env.ts';
import { startControlPlane, type ControlPlane } from '../src/start-control-plane.ts';
import { migratedDataDir } from './support/migrated-data-dir.ts';

/**
 * Issue 9 §3's read API over real HTTP on PostgreSQL: the overview's time series, the anomaly
 * journal, the audit trail, definitions with live counts, and a run's or instance's history download.
 * Runs are driven to their end by a real engine on a test clock set to known times, before the
 * control plane starts (so its own workers never touch them); journal rows are written at known times.
 */

const minute = 60_000;
const hour = 60 * minute;
// Three whole hours before the current one: a fixed grid, whatever minute the test runs in.
const t0 = Math.floor(Date.now() / hour) * hour - 3 * hour;
const at = (minutes: number, ms = 0) => new Date(t0 + minutes * minute + ms);

const step = defineAction({ name: 'series.step', run: async (input: { n: number }) => ({ n: input.n + 1 }) });
const okFlow = defineFlow({
  name: 'series.ok',
  version: 3,
  run: async (ctx, input: { n: number }) => ctx.action(step, input).run(),
});
const failFlow = defineFlow({
  name: 'series.fail',
  version: 1,
  run: async () => {
    throw new Error('refused on purpose');
  },
});

describe('the read API (PostgreSQL, HTTP)', () => {
  let plane: ControlPlane;
  let viewer: ReturnType<typeof apiClient>;
  let cookie: string;
  const okRuns: string[] = [];
  let failedStatus = '';
  const runForJournal = randomUUID();
  const instanceId = randomUUID();

  beforeAll(async () => {
    const url = await testDatabaseUrl('read_api');
    // The runs, on the engine's own clock: two at t0+5m, one at t0+20m (it fails), one at t0+70m.
    const db = await createDatabase({ kind: 'postgres', url });
    const clock = new TestClock(at(5));
    const t = await createTestEngine({ db, clock, flows: [okFlow, failFlow], actions: [step] });
    try {
      for (const n of [1, 2]) okRuns.push((await t.runToCompletion(okFlow, { n }, { skipTime: false })).run.id);
      clock.set(at(20));
      failedStatus = (await t.runToCompletion(failFlow, {}, { skipTime: false })).run.status;
      clock.set(at(70));
      okRuns.push((await t.runToCompletion(okFlow, { n: 3 }, { skipTime: false })).run.id);
    } finally {
      await t.close();
      await db.close();
    }
    plane = await startControlPlane(parseEnv({ DATABASE_URL: url, CONTROL_PORT: '0', LOG_LEVEL: 'silent' }));
    const { prisma } = plane.db;
    viewer = await signedInClient(plane, 'viewer');
    cookie = await signInCookie(plane.url, await createTestOperator(plane, 'viewer'));

    await prisma.anomalyLog.createMany({
      data: [
        { code: 'claim_lost', message: 'a', at: at(10), run_id: runForJournal },
        { code: 'claim_lost', message: 'b', at: at(10, 30_000) },
        { code: 'outcome_rejected', message: 'c', at: at(50), run_id: runForJournal },
      ],
    });
    await prisma.sagaInstance.create({
      data: { id: instanceId, process_name: 'series.proc', correlation_key: 'k-1', current_state: 'Shipping' },
    });
    await prisma.processTransition.createMany({
      data: [
        {
          instance_id: instanceId,
          process_name: 'series.proc',
          from_state: 'New',
          to_state: 'Paid',
          message_id: 'm1',
          message_type: 'Pay',
          at: at(15),
        },
        {
          instance_id: instanceId,
          process_name: 'series.proc',
          from_state: 'Paid',
          to_state: 'Shipping',
          message_id: 'm2',
          message_type: 'Ship',
          at: at(16),
        },
        // Not a transition: an ignored message is not counted.
        {
          instance_id: instanceId,
          process_name: 'series.proc',
          from_state: 'Shipping',
          to_state: 'Shipping',
          message_id: 'm3',
          message_type: 'Ship',
          outcome: 'ignored',
          at: at(17),
        },
        // Not a transition either: a release's audit row stays at the state it found.
        {
          instance_id: instanceId,
          process_name: 'series.proc',
          from_state: 'Shipping',
          to_state: 'Shipping',
          message_id: 'm4',
          message_type: 'Ship',
          outcome: 'repair',
          detail: { release: 'skip', operator: 'alice', reason: 'poison' },
          at: at(18),
        },
      ],
    });
    const repair = (i: number, command: string, status: string, when: Date, target = okRuns[0]!) => ({
      actor: i % 2 === 0 ? 'alice' : 'bob',
      command,
      target_type: command.startsWith('step') ? 'step' : 'run',
      target_id: command.startsWith('step') ? `${target}#1` : target,
      expected: {},
      actual: {},
      result: {},
      reason: `seeded ${i}`,
      idempotency_key: `seed-${i}-${randomUUID()}`,
      status,
      at: when,
    });
    await prisma.repairCommand.createMany({
      data: [repair(0, 'run.kick', 'applied', at(30)), repair(1, 'run.kick', 'conflict', at(30, 1))],
    });
    await prisma.outboxMessage.createMany({
      data: [
        {
          message_id: 'o1',
          source_kind: 'process',
          source_id: instanceId,
          type: 'T',
          destination: 'd',
          payload: {},
          status: 'Published',
          created_at: at(40),
          published_at: at(40, 1500),
        },
        {
          message_id: 'o2',
          source_kind: 'process',
          source_id: instanceId,
          type: 'T',
          destination: 'd',
          payload: {},
          status: 'Published',
          created_at: at(40, 2000),
          published_at: at(40, 6000),
        },
      ],
    });
  }, 120_000);

  afterAll(async () => {
    await plane?.stop();
  });

  describe('series.get', () => {
    it('counts runs started and finished by outcome per minute, on the engine clock, with zeros in between', async () => {
      const s = await viewer.series.get.query({ window: '1h', until: at(59, 59_000).toISOString() });
      expect(s).toMatchObject({
        bucket: 'minute',
        bucketSeconds: 60,
        from: at(0).toISOString(),
        until: at(60).toISOString(),
      });
      expect(s.buckets).toHaveLength(60);
      expect(s.buckets[0]).toBe(at(0).toISOString());
      expect(s.buckets[59]).toBe(at(59).toISOString());
      const expectedStarted = s.buckets.map((_, i) => (i === 5 ? 2 : i === 20 ? 1 : 0));
      expect(s.runsStarted).toEqual(expectedStarted);
      expect(failedStatus).toBe('Failed');
      expect(s.runsFinished).toEqual([
        { outcome: 'Completed', counts: s.buckets.map((_, i) => (i === 5 ? 2 : 0)) },
        { outcome: 'Failed', counts: s.buckets.map((_, i) => (i === 20 ? 1 : 0)) },
      ]);
    });

    it('transitions by process and (from → to), anomalies by code, repairs by command and outcome, outbox lag', async () => {
      const s = await viewer.series.get.query({ window: '1h', until: at(59).toISOString() });
      const one = (minuteIndex: number, n = 1) => s.buckets.map((_, i) => (i === minuteIndex ? n : 0));
      expect(s.transitions).toEqual([
        { process: 'series.proc', from: 'New', to: 'Paid', counts: one(15) },
        { process: 'series.proc', from: 'Paid', to: 'Shipping', counts: one(16) },
      ]);
      expect(s.anomalies).toEqual([
        { code: 'claim_lost', counts: one(10, 2) },
        { code: 'outcome_rejected', counts: one(50) },
      ]);
      expect(s.repairs).toEqual([
        { command: 'run.kick', outcome: 'applied', counts: one(30) },
        { command: 'run.kick', outcome: 'conflict', counts: one(30) },
      ]);
      expect(s.outbox.published).toEqual(one(40, 2));
      expect(s.outbox.maxLagSeconds).toEqual(s.buckets.map((_, i) => (i === 40 ? 4 : null)));
    });

    it('per hour over 24 h, the same runs land in their hours; a window with nothing is all zeros', async () => {
      const s = await viewer.series.get.query({ window: '24h', until: at(90).toISOString() });
      expect(s).toMatchObject({ bucket: 'hour', bucketSeconds: 3600 });
      expect(s.buckets).toHaveLength(24);
      expect(s.buckets.at(-1)).toBe(at(60).toISOString());
      expect(s.runsStarted.slice(-2)).toEqual([3, 1]);
      expect(s.runsStarted.reduce((a, b) => a + b, 0)).toBe(4);

      const empty = await viewer.series.get.query({ window: '6h', until: '2020-01-01T00:00:00Z' });
      expect(empty.buckets).toHaveLength(360);
      expect(empty.runsStarted).toEqual(empty.buckets.map(() => 0));
      expect([empty.runsFinished, empty.transitions, empty.anomalies, empty.repairs]).toEqual([[], [], [], []]);
      expect(empty.outbox.published.every((n) => n === 0)).toBe(true);
    });

    it('windows are bounded: a week per minute, an unknown window or an absurd until is a 400 naming the field', async () => {
      expect(await rejection(viewer.series.get.query({ window: '7d', bucket: 'minute' }))).toMatchObject({
        status: 400,
        field: 'input.bucket',
      });
      expect(await rejection(viewer.series.get.query({ window: '30d' } as unknown as { window: '7d' }))).toMatchObject({
        status: 400,
        field: 'input.window',
      });
      expect(await rejection(viewer.series.get.query({ until: '1999-01-01T00:00:00Z' }))).toMatchObject({
        status: 400,
        field: 'input.until',
      });
      expect((await viewer.series.get.query({ window: '7d' })).buckets).toHaveLength(168);
      expect(await rejection(apiClient(plane.url).series.get.query({}))).toMatchObject({ status: 401 });
    });
  });

  describe('anomalies.page', () => {
    it('pages newest first through every anomaly once, ties on the time included, and filters', async () => {
      const { prisma } = plane.db;
      // 95 more, in groups of five sharing one millisecond: the cursor must break ties by id.
      await prisma.anomalyLog.createMany({
        data: Array.from({ length: 95 }, (_, i) => ({
          code: i % 3 === 0 ? 'write_refused' : 'transition_lost',
          message: `bulk ${i}`,
          at: at(100 + Math.floor(i / 5)),
        })),
      });
      const all = await prisma.anomalyLog.findMany({ orderBy: [{ at: 'desc' }, { id: 'desc' }] });
      expect(all).toHaveLength(98);
      const seen: string[] = [];
      let cursor: string | undefined;
      let pages = 0;
      do {
        const page = await viewer.anomalies.page.query({ limit: 7, ...(cursor ? { cursor } : {}) });
        seen.push(...page.items.map((a) => a.id));
        cursor = page.nextCursor ?? undefined;
        pages++;
      } while (cursor && pages < 50);
      expect(seen).toEqual(all.map((a) => a.id.toString()));

      const byRun = await viewer.anomalies.page.query({ runId: runForJournal });
      expect(byRun.items.map((a) => [a.code, a.message])).toEqual([
        ['outcome_rejected', 'c'],
        ['claim_lost', 'a'],
      ]);
      const byCode = await viewer.anomalies.page.query({ code: 'write_refused', limit: 200 });
      expect(byCode.items).toHaveLength(32);
      const inRange = await viewer.anomalies.page.query({
        from: at(10).toISOString(),
        to: at(10, 30_000).toISOString(),
      });
      expect(inRange.items.map((a) => a.message)).toEqual(['b', 'a']);
      expect(await rejection(viewer.anomalies.page.query({ code: 'nope' as 'claim_lost' }))).toMatchObject({
        status: 400,
        field: 'input.code',
      });
      expect(await rejection(viewer.anomalies.page.query({ cursor: 'garbage' }))).toMatchObject({
        status: 400,
        field: 'input.cursor',
      });
      expect(
        await rejection(viewer.anomalies.page.query({ from: at(10).toISOString(), to: at(5).toISOString() })),
      ).toMatchObject({ status: 400, field: 'input.to' });
    });
  });

  describe('audit.page', () => {
    it('merges repairs and auth events newest first, reaching every row once through the cursor', async () => {
      const { prisma } = plane.db;
      // Repairs and auth events sharing timestamps, across sources: ties broken by source:id.
      const when = (i: number) => at(200 + Math.floor(i / 4));
      await prisma.repairCommand.createMany({
        data: Array.from({ length: 40 }, (_, i) => ({
          actor: i % 2 === 0 ? 'alice' : 'bob',
          command: i % 5 === 0 ? 'step.retry' : 'run.cancel',
          target_type: i % 5 === 0 ? 'step' : 'run',
          target_id: i % 5 === 0 ? `${okRuns[1]!}#1` : okRuns[1]!,
          expected: {},
          actual: {},
          result: {},
          reason: `bulk ${i}`,
          idempotency_key: `audit-${i}-${randomUUID()}`,
          status: i % 4 === 0 ? 'conflict' : 'applied',
          at: when(i),
        })),
      });
      await prisma.auditEvent.createMany({
        data: Array.from({ length: 40 }, (_, i) => ({
          actor: i % 2 === 0 ? 'alice' : 'carol',
          action: 'sign_in',
          outcome: i % 3 === 0 ? 'refused' : 'succeeded',
          at: when(i),
        })),
      });
      const repairs = await prisma.repairCommand.count();
      const events = await prisma.auditEvent.count();
      const seen: string[] = [];
      const times: string[] = [];
      let cursor: string | undefined;
      let pages = 0;
      do {
        const page = await viewer.audit.page.query({ limit: 9, ...(cursor ? { cursor } : {}) });
        seen.push(...page.items.map((e) => e.key));
        times.push(...page.items.map((e) => e.at));
        cursor = page.nextCursor ?? undefined;
        pages++;
      } while (cursor && pages < 100);
      expect(seen).toHaveLength(repairs + events);
      expect(new Set(seen).size).toBe(seen.length);
      expect([...times].sort().reverse()).toEqual(times);
      expect(seen.filter((k) => k.startsWith('repair:'))).toHaveLength(repairs);
    });

    it('filters by actor, command, target (a run: its step repairs too), outcome, source and time', async () => {
      const run = okRuns[1]!;
      const byTarget = await viewer.audit.page.query({ target: run, limit: 200 });
      expect(byTarget.items).toHaveLength(40);
      expect(byTarget.items.every((e) => e.runId === run)).toBe(true);
      expect(byTarget.items.filter((e) => e.targetType === 'step')).toHaveLength(8);

      const bob = await viewer.audit.page.query({ actor: 'bob', limit: 200 });
      expect(bob.items.every((e) => e.actor === 'bob' && e.source === 'repair')).toBe(true);
      expect(bob.items).toHaveLength(21);
      const carol = await viewer.audit.page.query({ actor: 'carol', limit: 200 });
      expect(carol.items.every((e) => e.source === 'auth')).toBe(true);
      expect(carol.items).toHaveLength(20);

      const retries = await viewer.audit.page.query({ command: 'step.retry', outcome: 'conflict', limit: 200 });
      expect(retries.items.map((e) => e.reason).sort()).toEqual(['bulk 0', 'bulk 20']);
      const refused = await viewer.audit.page.query({ source: 'auth', outcome: 'refused', limit: 200 });
      expect(refused.items.every((e) => e.action === 'sign_in' && e.outcome === 'refused')).toBe(true);
      expect(refused.items.filter((e) => e.at >= at(200).toISOString())).toHaveLength(14);

      const window = await viewer.audit.page.query({ from: at(30).toISOString(), to: at(30, 1).toISOString() });
      expect(window.items.map((e) => [e.action, e.outcome])).toEqual([
        ['run.kick', 'conflict'],
        ['run.kick', 'applied'],
      ]);
      expect(await rejection(viewer.audit.page.query({ actor: 'a\u0000b' }))).toMatchObject({
        status: 400,
        field: 'input.actor',
      });
      expect(await rejection(viewer.audit.page.query({ source: 'other' as 'auth' }))).toMatchObject({
        status: 400,
        field: 'input.source',
      });
      expect(await rejection(apiClient(plane.url).audit.page.query({}))).toMatchObject({ status: 401 });
    });
  });

  describe('definitions.list', () => {
    it('lists registered flows and processes with live counts of open runs and instances', async () => {
      const { prisma } = plane.db;
      await prisma.flowRun.createMany({
        data: [
          { flow_name: 'demo.order', flow_version: 1, status: 'Waiting', input: {} },
          { flow_name: 'demo.order', flow_version: 1, status: 'Waiting', input: {}, stuck_reason: 'owner_gone: x' },
          { flow_name: 'gone.flow', flow_version: 2, status: 'Running', input: {}, stuck_reason: 'unknown_flow: x' },
        ],
      });
      await prisma.sagaInstance.createMany({
        data: [
          { process_name: 'demo.fulfilment', correlation_key: 'd-1', current_state: 'ManualReview' },
          {
            process_name: 'demo.fulfilment',
            correlation_key: 'd-2',
            current_state: 'ManualReview',
            status: 'QUARANTINED',
          },
          {
            process_name: 'demo.fulfilment',
            correlation_key: 'd-3',
            current_state: 'Compensated',
            status: 'COMPLETED',
          },
        ],
      });
      const defs = await viewer.definitions.list.query();
      const order = defs.flows.find((f) => f.name === 'demo.order');
      expect(order).toMatchObject({ registeredVersion: 1, openTotal: 2 });
      expect(order?.versions).toEqual([{ version: 1, open: { Waiting: 2 }, stuck: 1 }]);
      expect(defs.flows.find((f) => f.name === 'gone.flow')).toEqual({
        name: 'gone.flow',
        registeredVersion: null,
        versions: [{ version: 2, open: { Running: 1 }, stuck: 1 }],
        openTotal: 1,
      });
      // Finished runs are not live: series.ok's runs are all Completed.
      expect(defs.flows.find((f) => f.name === 'series.ok')).toBeUndefined();
      const fulfilment = defs.processes.find((p) => p.name === 'demo.fulfilment');
      expect(fulfilment).toMatchObject({ registered: true, active: 1, quarantined: 1 });
      expect(fulfilment?.byState).toEqual([{ state: 'ManualReview', active: 1, quarantined: 1 }]);
      expect(fulfilment?.states).toContain('ManualReview');
      expect(defs.processes.find((p) => p.name === 'series.proc')).toMatchObject({ registered: false, active: 1 });
    });
  });

  describe('history download', () => {
    const get = (path: string, withCookie = true) =>
      fetch(`${plane.url}${path}`, { headers: withCookie ? { cookie } : {} });

    it("a run's whole history is a JSON attachment: row, every step, event, anomaly and repair", async () => {
      const { prisma } = plane.db;
      const runId = okRuns[0]!;
      await prisma.anomalyLog.create({ data: { code: 'claim_lost', message: 'on the run', run_id: runId } });
      const res = await get(`/history/runs/${runId}`);
      expect(res.status).toBe(200);
      expect(res.headers.get('content-disposition')).toBe(`attachment; filename="run-${runId}.json"`);
      expect(res.headers.get('content-type')).toMatch(/^application\/json/);
      const body = (await res.json()) as Record<string, unknown[]> & { run: { id: string; status: string } };
      expect(body.run).toMatchObject({ id: runId, status: 'Completed' });
      const events = await prisma.flowEvent.findMany({ where: { run_id: runId }, orderBy: { id: 'asc' } });
      expect(events.length).toBeGreaterThan(2);
      expect((body.events as { id: string; type: string }[]).map((e) => [e.id, e.type])).toEqual(
        events.map((e) => [e.id.toString(), e.type]),
      );
      expect(body.steps).toHaveLength(await prisma.actionRun.count({ where: { run_id: runId } }));
      expect((body.anomalies as { message: string }[]).map((a) => a.message)).toEqual(['on the run']);
      expect((body.repairs as { target_id: string }[]).map((r) => r.target_id)).toEqual([runId, runId]);
    });

    it("an instance's history has its transitions and outbox rows; unknown, malformed and signed-out are refused", async () => {
      const res = await get(`/history/instances/${instanceId}`);
      expect(res.status).toBe(200);
      expect(res.headers.get('content-disposition')).toBe(`attachment; filename="instance-${instanceId}.json"`);
      const body = (await res.json()) as { instance: { id: string }; transitions: unknown[]; outbox: unknown[] };
      expect(body.instance.id).toBe(instanceId);
      expect(body.transitions).toHaveLength(4);
      expect(body.outbox).toHaveLength(2);

      expect((await get(`/history/runs/${randomUUID()}`)).status).toBe(404);
      const bad = await get('/history/runs/not-a-uuid');
      expect(bad.status).toBe(400);
      expect(await bad.text()).toContain('not a UUID');
      const signedOut = await get(`/history/runs/${okRuns[0]!}`, false);
      expect(signedOut.status).toBe(401);
      expect(signedOut.headers.get('content-disposition')).toBeNull();
      expect(
        (await fetch(`${plane.url}/history/runs/${okRuns[0]!}`, { method: 'POST', headers: { cookie } })).status,
      ).toBe(405);
    });
  });
});

describe('the read API on embedded PGlite (HTTP)', () => {
  let plane: ControlPlane;
  let viewer: ReturnType<typeof apiClient>;

  beforeAll(async () => {
    const dataDir = await migratedDataDir('read-api');
    plane = await startControlPlane(parseEnv({ SAGAFLOW_DATA_DIR: dataDir, CONTROL_PORT: '0', LOG_LEVEL: 'silent' }));
    viewer = await signedInClient(plane, 'viewer');
  }, 120_000);
  afterAll(async () => {
    await plane?.stop();
  });

  it('the same SQL: series buckets zero-filled, journals paged through every row, a history download', async () => {
    const { prisma } = plane.db;
    const run = await prisma.flowRun.create({
      data: {
        flow_name: 'pglite.flow',
        flow_version: 1,
        status: 'Completed',
        input: {},
        created_at: at(3),
        updated_at: at(4),
        finished_at: at(4),
      },
    });
    await prisma.anomalyLog.createMany({
      data: Array.from({ length: 12 }, (_, i) => ({
        code: 'claim_lost',
        message: `p${i}`,
        at: at(10 + Math.floor(i / 3)),
        run_id: run.id,
      })),
    });
    const s = await viewer.series.get.query({ window: '1h', until: at(59).toISOString() });
    expect(s.runsStarted).toEqual(s.buckets.map((_, i) => (i === 3 ? 1 : 0)));
    expect(s.runsFinished).toEqual([{ outcome: 'Completed', counts: s.buckets.map((_, i) => (i === 4 ? 1 : 0)) }]);
    expect(s.anomalies).toEqual([{ code: 'claim_lost', counts: s.buckets.map((_, i) => (i >= 10 && i < 14 ? 3 : 0)) }]);

    const seen: string[] = [];
    let cursor: string | undefined;
    do {
      const page = await viewer.anomalies.page.query({ limit: 5, ...(cursor ? { cursor } : {}) });
      seen.push(...page.items.map((a) => a.message));
      cursor = page.nextCursor ?? undefined;
    } while (cursor && seen.length < 100);
    expect(seen).toEqual(['p11', 'p10', 'p9', 'p8', 'p7', 'p6', 'p5', 'p4', 'p3', 'p2', 'p1', 'p0']);

    // Sign-ins are audited: the viewer's own is in the trail.
    const trail = await viewer.audit.page.query({ command: 'sign_in', outcome: 'succeeded' });
    expect(trail.items.length).toBeGreaterThan(0);
    expect((await viewer.definitions.list.query()).flows.map((f) => f.name)).toContain('demo.order');

    const cookie = await signInCookie(plane.url, await createTestOperator(plane, 'viewer'));
    const res = await fetch(`${plane.url}/history/runs/${run.id}`, { headers: { cookie } });
    expect(res.status).toBe(200);
    const body = (await res.json()) as { run: { id: string }; anomalies: unknown[] };
    expect(body.run.id).toBe(run.id);
    expect(body.anomalies).toHaveLength(12);
  });
});

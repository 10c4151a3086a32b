import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { defineAction, defineFlow, NonRetryableError } from '../src/index.ts';
import { openTestEngine } from './support/open-test-engine.ts';
import { testDbKind } from './support/test-database.ts';
import { lateOutcomeTurnedAway } from './support/late-outcome.ts';

const log: string[] = [];
let releaseShip: () => void = () => undefined;
let fragileBroken = false;
let planGate: Promise<void> | null = null;
/** Called by a replay of `fragile` that reaches `planGate` while it is set. */
let atPlanGate: () => void = () => undefined;

const reserve = defineAction({
  name: 'mr-reserve',
  run: async (i: { id: string }) => (log.push(`reserve ${i.id}`), i),
});
const unreserve = defineAction({
  name: 'mr-unreserve',
  run: async (i: { id: string }) => (log.push(`unreserve ${i.id}`), { ok: true }),
});
const ship = defineAction({
  name: 'mr-ship',
  run: async (i: { id: string }) => {
    log.push(`ship started ${i.id}`);
    await new Promise<void>((r) => (releaseShip = r));
    log.push(`ship finished ${i.id}`);
    return { shipped: true };
  },
});

/** Reserve, then wait for a confirmation for up to an hour; undo the reservation on any failure. */
const booking = defineFlow({
  name: 'mr-booking',
  version: 1,
  run: async (ctx, input: { id: string; ship?: boolean }) => {
    try {
      await ctx.action(reserve, { id: input.id }).compensateWith(unreserve, (o) => ({ id: o.id }));
      if (input.ship) return await ctx.action(ship, { id: input.id });
      await ctx.awaitSignal('confirm', { timeoutSeconds: 3600 });
      return { confirmed: true };
    } catch (err) {
      await ctx.compensate();
      throw err;
    }
  },
});

/** Its code reads something that can go away: while it is gone, every replay throws. */
const fragile = defineFlow({
  name: 'mr-fragile',
  version: 1,
  run: async (ctx, input: { id: string }) => {
    if (fragileBroken) throw new Error('pricing table is gone');
    if (planGate) {
      atPlanGate();
      await planGate;
    }
    try {
      await ctx.action(reserve, { id: input.id }).compensateWith(unreserve, (o) => ({ id: o.id }));
      await ctx.awaitSignal('confirm', { timeoutSeconds: 3600 });
      return { confirmed: true };
    } catch (err) {
      await ctx.compensate();
      throw err;
    }
  },
});

describe(`the expiration monitor over runs (${testDbKind()})`, () => {
  let t: Awaited<ReturnType<typeof openTestEngine>>;
  beforeAll(async () => {
    t = await openTestEngine({
      flows: [booking, fragile],
      actions: [reserve, unreserve, ship],
      config: { monitor: { expiration: { backoff: { base_seconds: 30, max_seconds: 100 } } } },
    });
  });
  afterAll(async () => {
    releaseShip();
    await t.closeAll();
  });

  const waiting = async (runId: string) =>
    t.drive(runId, { skipTime: false, until: (d) => d.run.status === 'Waiting' });
  const events = async (runId: string) =>
    (await t.db.prisma.flowEvent.findMany({ where: { run_id: runId }, orderBy: { id: 'asc' } })).map((e) => e.type);

  it('an overdue run is expired: its live wait gets FlowError("expired"), it compensates and ends Expired', async () => {
    const { runId } = await t.engine.startFlow(booking, { id: 'a' }, { expiresInSeconds: 60 });
    await waiting(runId);
    expect(await t.engine.sweepExpiredRuns()).toEqual({ expired: [], failed: [] });
    t.clock.advance(61_000);
    expect(await t.engine.sweepExpiredRuns()).toEqual({ expired: [runId], failed: [] });
    const done = await t.drive(runId, { skipTime: false });
    expect(done.run.status).toBe('Expired');
    expect(done.run.error).toMatchObject({ name: 'FlowError', code: 'expired' });
    expect(log.filter((l) => l === 'unreserve a')).toHaveLength(1);
    const history = await events(runId);
    expect(history.indexOf('run.expiry_started')).toBeGreaterThan(-1);
    expect(history.indexOf('run.expiry_started')).toBeLessThan(history.indexOf('run.expired'));
    const started = await t.db.prisma.flowEvent.findFirstOrThrow({
      where: { run_id: runId, type: 'run.expiry_started' },
    });
    expect(started.data).toMatchObject({ compensations: ['mr-unreserve'] });
    // Expired once: a second sweep finds nothing.
    t.clock.advance(1000);
    expect(await t.engine.sweepExpiredRuns()).toEqual({ expired: [], failed: [] });
  });

  it('a Running step held by a hung worker is expired with the run; its late success is fenced off', async () => {
    const { runId } = await t.engine.startFlow(booking, { id: 'b', ship: true }, { expiresInSeconds: 60 });
    const driving = t.drive(runId, { skipTime: false, until: (d) => d.run.status !== 'Running' });
    for (let i = 0; i < 400 && !log.includes('ship started b'); i++) await new Promise((r) => setTimeout(r, 25));
    expect(log).toContain('ship started b');
    t.clock.advance(61_000);
    expect((await t.engine.sweepExpiredRuns()).expired).toEqual([runId]);
    releaseShip();
    await driving.catch(() => undefined);
    const done = await t.drive(runId, { skipTime: false });
    expect(done.run.status).toBe('Expired');
    expect(done.actions.find((a) => a.name === 'mr-ship')).toMatchObject({ status: 'Expired', output: null });
    expect(log.filter((l) => l === 'unreserve b')).toHaveLength(1);
    // The late success is turned away and journaled (the expiry's wake replays beside the hung worker).
    expect((await lateOutcomeTurnedAway(t.db, runId)).length).toBeGreaterThan(0);
  });

  it('a run that finished just before the sweep is not expired', async () => {
    const { runId } = await t.engine.startFlow(booking, { id: 'c' }, { expiresInSeconds: 60 });
    await waiting(runId);
    await t.engine.signal(runId, 'confirm');
    expect((await t.drive(runId, { skipTime: false })).run.status).toBe('Completed');
    t.clock.advance(61_000);
    expect(await t.engine.sweepExpiredRuns()).toEqual({ expired: [], failed: [] });
    expect((await t.engine.getRun(runId))?.run.status).toBe('Completed');
  });

  it('a run whose code throws on replay is journaled expiry_failed, held off for a doubling window, and counted for good', async () => {
    const { runId } = await t.engine.startFlow(fragile, { id: 'd' }, { expiresInSeconds: 60 });
    await waiting(runId);
    t.clock.advance(61_000);
    fragileBroken = true;
    const row = async () => t.db.prisma.flowRun.findUniqueOrThrow({ where: { id: runId } });
    const windows: number[] = [];
    for (let attempt = 1; attempt <= 4; attempt++) {
      const r = await t.engine.sweepExpiredRuns();
      expect(r.expired).toEqual([]);
      expect(r.failed).toEqual([expect.objectContaining({ runId, attempts: attempt })]);
      const now = t.clock.now().getTime();
      const held = await row();
      windows.push(((held.expiry_retry_at?.getTime() ?? now) - now) / 1000);
      // Held off: the next sweep inside the window leaves it alone.
      expect(await t.engine.sweepExpiredRuns()).toEqual({ expired: [], failed: [] });
      t.clock.advance((held.expiry_retry_at?.getTime() ?? now) - now + 1);
    }
    expect(windows).toEqual([30, 60, 100, 100]);
    const anomalies = await t.db.prisma.anomalyLog.findMany({
      where: { run_id: runId, code: 'expiry_failed' },
      orderBy: { id: 'asc' },
    });
    expect(anomalies).toHaveLength(4);
    expect(anomalies[3]?.details).toMatchObject({ attempts: 4, error: { message: 'pricing table is gone' } });
    expect(anomalies[0]?.name).toBe('mr-fragile');
    const stillOpen = await row();
    expect(stillOpen).toMatchObject({ status: 'Waiting', expired_at: null, expiry_attempts: 4 });
    expect(stillOpen.stuck_reason).toMatch(/^expiry_failed: .*\(attempt 4\): pricing table is gone$/);
    expect(log).not.toContain('unreserve d');

    // The cause clears: the next open window expires it, and the count stays.
    fragileBroken = false;
    expect((await t.engine.sweepExpiredRuns()).expired).toEqual([runId]);
    expect((await row()).stuck_reason).toBeNull();
    expect((await t.drive(runId, { skipTime: false })).run.status).toBe('Expired');
    expect(log.filter((l) => l === 'unreserve d')).toHaveLength(1);
    expect((await row()).expiry_attempts).toBe(4);
  });

  it('one bad run does not hold up the page: the sweep pages past it', async () => {
    const bad = await t.engine.startFlow(fragile, { id: 'e' }, { expiresInSeconds: 10 });
    await waiting(bad.runId);
    const good1 = await t.engine.startFlow(booking, { id: 'f' }, { expiresInSeconds: 20 });
    const good2 = await t.engine.startFlow(booking, { id: 'g' }, { expiresInSeconds: 30 });
    await waiting(good1.runId);
    await waiting(good2.runId);
    t.clock.advance(31_000);
    fragileBroken = true;
    try {
      const r = await t.engine.sweepExpiredRuns({ pageSize: 1 });
      expect(r.failed.map((f) => f.runId)).toEqual([bad.runId]);
      expect(r.expired).toEqual([good1.runId, good2.runId]);
    } finally {
      fragileBroken = false;
    }
  });
});

let releaseUndo: () => void = () => undefined;
const hangingUndo = defineAction({
  name: 'mr-hanging-undo',
  run: async () => {
    log.push('undo started');
    await new Promise<void>((r) => (releaseUndo = r));
    return { ok: true };
  },
});
const decline = defineAction({
  name: 'mr-decline',
  run: async (): Promise<null> => {
    throw new NonRetryableError('card declined');
  },
});
const undoHangs = defineFlow({
  name: 'mr-undo-hangs',
  version: 1,
  run: async (ctx) => {
    try {
      await ctx.action(reserve, { id: 'u' }).compensateWith(hangingUndo, () => null);
      return await ctx.action(decline, null);
    } catch (err) {
      await ctx.compensate();
      throw err;
    }
  },
});

describe(`a monitor pass keeps its lease (${testDbKind()})`, () => {
  let t: Awaited<ReturnType<typeof openTestEngine>>;
  beforeAll(async () => {
    t = await openTestEngine({ flows: [fragile], actions: [reserve, unreserve, ship] });
  });
  afterAll(async () => t.closeAll());

  it('a pass that loses the lease mid-way (another replica took over) stops before the next run', async () => {
    const first = await t.engine.startFlow(fragile, { id: 'l1' }, { expiresInSeconds: 10 });
    const second = await t.engine.startFlow(fragile, { id: 'l2' }, { expiresInSeconds: 20 });
    for (const r of [first, second])
      await t.drive(r.runId, { skipTime: false, until: (d) => d.run.status === 'Waiting' });
    t.clock.advance(21_000);
    let open: () => void = () => undefined;
    planGate = new Promise<void>((r) => (open = r));
    const planning = new Promise<void>((r) => (atPlanGate = r));
    const pass = t.engine.monitorPass({ doctor: false });
    // While the first run is being planned (progress, not time: its planning replay waits at the gate, the
    // pass holding the lease), the lease lapses and another replica takes it. After a fixed wait instead, a
    // loaded machine could take it over before the pass had even taken the lease, or no row was there yet.
    await planning;
    await t.db.prisma.lease.updateMany({
      where: { name: 'monitor' },
      data: { holder: 'replica-b', expires_at: new Date(Date.now() + 60_000) },
    });
    planGate = null;
    open();
    const r = await pass;
    expect(r).toMatchObject({ swept: true, runs: { expired: [], failed: [] } });
    const rows = await t.db.prisma.flowRun.findMany({ where: { id: { in: [first.runId, second.runId] } } });
    expect(rows.map((x) => x.expired_at)).toEqual([null, null]);
    expect(await t.db.prisma.lease.findFirst({ where: { name: 'monitor' } })).toMatchObject({ holder: 'replica-b' });
  });
});

describe(`expiration defaults from config (${testDbKind()})`, () => {
  let t: Awaited<ReturnType<typeof openTestEngine>>;
  beforeAll(async () => {
    t = await openTestEngine({
      flows: [booking, undoHangs],
      actions: [reserve, unreserve, ship, hangingUndo, decline],
      config: { monitor: { expiration: { defaults: { run: 120, action: 45, compensation: 90 } } } },
    });
  });
  afterAll(async () => {
    releaseUndo();
    await t.closeAll();
  });

  it('a compensation past its deadline is Expired and its rollback level ends unfinished, not hung', async () => {
    const { runId } = await t.engine.startFlow(undoHangs, null);
    const driving = t.drive(runId, { skipTime: false }).catch(() => undefined);
    for (let i = 0; i < 400 && !log.includes('undo started'); i++) await new Promise((r) => setTimeout(r, 25));
    expect(log).toContain('undo started');
    expect((await t.engine.sweepExpiredSteps()).expired).toBe(0);
    t.clock.advance(91_000);
    expect((await t.engine.sweepExpiredSteps()).expired).toBe(1);
    releaseUndo();
    await driving;
    const done = await t.drive(runId, { skipTime: false });
    expect(done.run.status).toBe('Failed');
    expect(done.run.error).toMatchObject({ code: 'compensation_unfinished' });
    const comp = await t.db.prisma.compensationRun.findFirstOrThrow({ where: { run_id: runId } });
    expect(comp).toMatchObject({ status: 'Expired', output: null });
    const types = (await t.db.prisma.flowEvent.findMany({ where: { run_id: runId } })).map((e) => e.type);
    expect(types).toContain('compensation.expired');
  });

  it('a run, its actions and its compensations get the configured deadlines when they set none', async () => {
    const startedAt = t.clock.now().getTime();
    const { runId } = await t.engine.startFlow(booking, { id: 'h' });
    await t.drive(runId, { skipTime: false, until: (d) => d.run.status === 'Waiting' });
    const run = await t.db.prisma.flowRun.findUniqueOrThrow({ where: { id: runId } });
    expect(run.expires_at?.getTime()).toBe(startedAt + 120_000);
    const action = await t.db.prisma.actionRun.findFirstOrThrow({ where: { run_id: runId, name: 'mr-reserve' } });
    // Scheduled on the engine's clock, after the run started: 45 s from then.
    const actionDeadline = (action.expires_at?.getTime() ?? 0) - startedAt;
    expect(actionDeadline).toBeGreaterThanOrEqual(45_000);
    expect(actionDeadline).toBeLessThan(50_000);
    t.clock.advance(121_000);
    expect((await t.engine.sweepExpiredRuns()).expired).toEqual([runId]);
    const compensatingAt = t.clock.now().getTime();
    expect((await t.drive(runId, { skipTime: false })).run.status).toBe('Expired');
    const comp = await t.db.prisma.compensationRun.findFirstOrThrow({ where: { run_id: runId } });
    const compDeadline = (comp.expires_at?.getTime() ?? 0) - compensatingAt;
    expect(compDeadline).toBeGreaterThanOrEqual(90_000);
    expect(compDeadline).toBeLessThan(95_000);
  });
});

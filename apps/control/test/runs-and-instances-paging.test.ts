import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import './provided-context.ts';
import {
  rawCall,
  rejection,
  signedInClient,
  signInCookie,
  createTestOperator,
  testDatabaseUrl,
  type apiClient,
} from './support/test-plane.ts';
import { parseEnv } from '../src/env.ts';
import { startControlPlane, type ControlPlane } from '../src/start-control-plane.ts';

/**
 * Issue 10, item 3: the lists page by keyset cursor over real HTTP on PostgreSQL. The rows are
 * written straight into the tables (terminal statuses, an unknown flow, no jobs: no worker touches
 * them), 1,200 runs, more than any page or the old 500-row limit.
 */
describe('runs.page and instances.page (PostgreSQL, HTTP)', () => {
  let plane: ControlPlane;
  let api: ReturnType<typeof apiClient>;
  let cookie: string;
  const flow = `paging.flow.${randomUUID().slice(0, 6)}`;
  const base = Date.parse('2026-01-01T00:00:00Z');
  const total = 1200;

  beforeAll(async () => {
    const url = await testDatabaseUrl('lists_paging');
    plane = await startControlPlane(parseEnv({ DATABASE_URL: url, CONTROL_PORT: '0', LOG_LEVEL: 'silent' }));
    api = await signedInClient(plane, 'viewer');
    cookie = await signInCookie(plane.url, await createTestOperator(plane, 'viewer'));
    const statuses = ['Completed', 'Failed', 'Cancelled'] as const;
    await plane.db.prisma.flowRun.createMany({
      data: Array.from({ length: total }, (_, i) => ({
        flow_name: flow,
        flow_version: 1,
        business_key: `order-${i}`,
        status: statuses[i % 3]!,
        input: { big: 'x'.repeat(2000), i },
        output: { secret: 'not in a list' },
        // Every tenth run shares its created_at with the next: ties are broken by id.
        created_at: new Date(base + Math.floor(i / 2) * 1000),
        updated_at: new Date(base + Math.floor(i / 2) * 1000),
        ...(i % 100 === 7 ? { stuck_reason: 'replay_blocked: test', status: 'Waiting' } : {}),
      })),
    });
  }, 120_000);
  afterAll(async () => {
    await plane.stop();
  });

  it('paging newest first with a small page reaches every run exactly once, even with runs inserted meanwhile', async () => {
    const seen: string[] = [];
    let cursor: string | undefined;
    let pages = 0;
    do {
      const page = await api.runs.page.query({ flowName: flow, limit: 37, ...(cursor ? { cursor } : {}) });
      seen.push(...page.items.map((r) => r.id));
      for (const r of page.items) expect(r).not.toHaveProperty('input');
      cursor = page.nextCursor ?? undefined;
      pages++;
      // A run started while someone pages is newer than the first page: it is not in this walk
      // and shifts nothing under the cursor.
      if (pages % 5 === 0)
        await plane.db.prisma.flowRun.create({
          data: { flow_name: flow, flow_version: 1, status: 'Completed', input: {}, business_key: randomUUID() },
        });
    } while (cursor);
    expect(pages).toBe(Math.ceil(total / 37));
    expect(new Set(seen).size).toBe(seen.length);
    const inserted = await plane.db.prisma.flowRun.findMany({
      where: { flow_name: flow, created_at: { lt: new Date(base + total * 1000) } },
      select: { id: true },
    });
    expect(new Set(seen)).toEqual(new Set(inserted.map((r) => r.id)));
  }, 120_000);

  it('stalest first with a status filter pages to the end; the counts are per status under the other filters', async () => {
    const seen: string[] = [];
    let cursor: string | undefined;
    let counts: Record<string, number> | undefined;
    let lastUpdated = '';
    do {
      const page = await api.runs.page.query({
        flowName: flow,
        status: ['Failed'],
        order: 'stalest',
        limit: 50,
        ...(cursor ? { cursor } : {}),
      });
      counts = page.counts;
      for (const r of page.items) {
        expect(r.status).toBe('Failed');
        expect(r.updatedAt >= lastUpdated).toBe(true);
        lastUpdated = r.updatedAt;
      }
      seen.push(...page.items.map((r) => r.id));
      cursor = page.nextCursor ?? undefined;
    } while (cursor);
    const failed = await plane.db.prisma.flowRun.count({ where: { flow_name: flow, status: 'Failed' } });
    expect(seen.length).toBe(failed);
    expect(new Set(seen).size).toBe(failed);
    expect(counts?.Failed).toBe(failed);
    expect(counts?.Waiting).toBe(12);
    expect(counts?.Completed).toBe(
      await plane.db.prisma.flowRun.count({ where: { flow_name: flow, status: 'Completed' } }),
    );
  }, 60_000);

  it('stuck only, search by business key and by run id find exactly their runs', async () => {
    const stuck = await api.runs.page.query({ flowName: flow, stuckOnly: true, limit: 200 });
    expect(stuck.items.map((r) => r.businessKey).sort()).toEqual(
      Array.from({ length: 12 }, (_, k) => `order-${k * 100 + 7}`).sort(),
    );
    expect(stuck.items.every((r) => r.stuckReason === 'replay_blocked: test')).toBe(true);
    const byReason = await api.runs.page.query({ flowName: flow, stuckReason: 'replay_blocked', limit: 5 });
    expect(byReason.counts.Waiting).toBe(12);
    const byKey = await api.runs.page.query({ search: 'order-1033' });
    expect(byKey.items.map((r) => r.businessKey)).toEqual(['order-1033']);
    const byId = await api.runs.page.query({ search: byKey.items[0]!.id.toUpperCase() });
    expect(byId.items.map((r) => r.id)).toEqual([byKey.items[0]!.id]);
    const window = await api.runs.page.query({
      flowName: flow,
      createdFrom: new Date(base + 10_000).toISOString(),
      createdTo: new Date(base + 19_000).toISOString(),
      limit: 200,
    });
    expect(window.items.length).toBe(20);
  });

  it('a bad filter or cursor is a 400 naming the field', async () => {
    expect(await rejection(api.runs.page.query({ cursor: 'not-a-cursor' }))).toMatchObject({
      status: 400,
      field: 'input.cursor',
    });
    const page = await api.runs.page.query({ flowName: flow, limit: 2 });
    expect(
      await rejection(api.runs.page.query({ flowName: flow, order: 'stalest', cursor: page.nextCursor! })),
    ).toMatchObject({ status: 400, field: 'input.cursor' });
    expect(await rejection(api.runs.page.query({ status: ['Bogus' as 'Completed'] }))).toMatchObject({
      status: 400,
      field: 'input.status.0',
    });
    expect(await rejection(api.runs.page.query({ createdFrom: 'yesterday' }))).toMatchObject({
      status: 400,
      field: 'input.createdFrom',
    });
    expect(await rejection(api.runs.page.query({ direction: 'backward' as 'forward' }))).toMatchObject({
      status: 400,
      field: 'input.direction',
    });
    expect(await rejection(api.runs.page.query({ limit: 100_000 }))).toMatchObject({
      status: 400,
      field: 'input.limit',
    });
    expect(await rejection(api.instances.page.query({ cursor: 'eyJ4IjoxfQ' }))).toMatchObject({
      status: 400,
      field: 'input.cursor',
    });
    expect(await rejection(api.instances.page.query({ status: ['NOPE' as 'ACTIVE'] }))).toMatchObject({
      status: 400,
      field: 'input.status.0',
    });
    const anonymous = await rawCall(plane.url, 'runs.page', { input: {} });
    expect(anonymous.status).toBe(401);
    const signedIn = await rawCall(plane.url, 'runs.page', { input: { flowName: flow, limit: 1 }, cookie });
    expect(signedIn.status).toBe(200);
  });

  it('instances page by cursor through every instance, filter by state and quarantine, and search a correlation key', async () => {
    const processName = `paging.process.${randomUUID().slice(0, 6)}`;
    await plane.db.prisma.sagaInstance.createMany({
      data: Array.from({ length: 230 }, (_, i) => ({
        process_name: processName,
        correlation_key: `corr-${i}`,
        status: i % 10 === 0 ? 'QUARANTINED' : 'ACTIVE',
        current_state: i % 7 === 0 ? 'ManualReview' : 'Reserving',
        state: { big: 'y'.repeat(1000) },
        updated_at: new Date(base + Math.floor(i / 3) * 1000),
        created_at: new Date(base + Math.floor(i / 3) * 1000),
      })),
    });
    const seen: string[] = [];
    let cursor: string | undefined;
    do {
      const page = await api.instances.page.query({ processName, limit: 17, ...(cursor ? { cursor } : {}) });
      for (const i of page.items) expect(i).not.toHaveProperty('state');
      seen.push(...page.items.map((i) => i.id));
      cursor = page.nextCursor ?? undefined;
    } while (cursor);
    expect(new Set(seen).size).toBe(230);
    expect(seen.length).toBe(230);
    const quarantined = await api.instances.page.query({ processName, status: ['QUARANTINED'], limit: 200 });
    expect(quarantined.items.length).toBe(23);
    expect(quarantined.counts).toEqual({ ACTIVE: 207, COMPLETED: 0, QUARANTINED: 23 });
    const review = await api.instances.page.query({ processName, state: 'ManualReview', limit: 200 });
    expect(review.items.length).toBe(33);
    expect(review.items.every((i) => i.currentState === 'ManualReview')).toBe(true);
    const found = await api.instances.page.query({ search: 'corr-42' });
    expect(found.items.map((i) => i.correlationKey)).toEqual(['corr-42']);
  });
});

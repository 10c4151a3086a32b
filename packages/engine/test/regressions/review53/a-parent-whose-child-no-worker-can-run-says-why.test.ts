import { pino } from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createEngine, defineAction, defineFlow, type Database, type Engine } from '../../../src/index.ts';
import { openTestDatabase, testDbKind } from '../../support/test-database.ts';
import { waitFor } from '../../support/wait-for.ts';
import { silentRuns, troubleConfig } from './support/liveness.ts';

/**
 * Review 53 (ADR 0112, 0124): a parent starts a child of a flow no running worker has (a deploy
 * that shipped the parent before the child). The child's wake is handed back, saying why; the parent,
 * waiting on it, must say so too, within a few monitor passes: no run of the tree open with no reason.
 */
const ping = defineAction({ name: 'r53-lack-ping', run: async () => 'pong' });
const kid = defineFlow({ name: 'r53-lack-kid', version: 1, run: async (ctx) => ctx.action(ping, null) });
const parent = defineFlow({ name: 'r53-lack-parent', version: 1, run: async (ctx) => ctx.child(kid, null) });

describe(`review 53: a child no worker can run (${testDbKind()})`, () => {
  let db: Database;
  let engine: Engine;
  beforeAll(async () => {
    db = await openTestDatabase();
    // This worker has the parent only: the child's definition is in the code, not registered here.
    engine = createEngine({
      db,
      flows: [parent],
      actions: [ping],
      config: troubleConfig,
      logger: pino({ level: 'silent' }),
    });
    engine.startWorkers();
    engine.startMonitor({ intervalMs: 200 });
  });
  afterAll(async () => {
    await engine?.stopMonitor().catch(() => undefined);
    await engine?.stopWorkers(500).catch(() => undefined);
    await db?.close();
  });

  it('a parent waiting on a child of a flow no worker has, and the child, both say why', async () => {
    const started = await engine.startFlow(parent, null).catch((err: unknown) => ({ refused: String(err) }));
    if ('refused' in started) {
      // Refusing the start is also an answer: nothing is left open.
      expect(started.refused).toMatch(/r53-lack-kid|child/);
      return;
    }
    const { runId } = started;
    const tree = async () => [
      runId,
      ...(await db.prisma.flowRun.findMany({ where: { parent_run_id: runId }, select: { id: true } })).map((r) => r.id),
    ];
    await waitFor('the child to exist', async () => ((await tree()).length > 1 ? true : undefined), 10_000).catch(
      () => null,
    );
    await waitFor(
      'every run of the tree to say why',
      async () => ((await silentRuns(db, await tree())).length === 0 ? true : undefined),
      10_000,
    ).catch(() => null);
    const runs = await db.prisma.flowRun.findMany({
      where: { id: { in: await tree() } },
      select: { flow_name: true, status: true, stuck_reason: true, waiting_for: true, error: true },
    });
    expect({ silent: await silentRuns(db, await tree()), runs }).toMatchObject({ silent: [] });
    // ADR 0124: a parent names its stuck child, within a few monitor passes (every 200 ms; 10 s here).
    const parentRun = await waitFor(
      'the parent to name its stuck child',
      async () => {
        const r = await db.prisma.flowRun.findUniqueOrThrow({ where: { id: runId } });
        return r.stuck_reason !== null ? r : undefined;
      },
      10_000,
    ).catch(() => null);
    const now = await db.prisma.flowRun.findUniqueOrThrow({ where: { id: runId } });
    expect(parentRun?.stuck_reason ?? now.stuck_reason, JSON.stringify(runs)).toMatch(/child/);
  }, 40_000);
});

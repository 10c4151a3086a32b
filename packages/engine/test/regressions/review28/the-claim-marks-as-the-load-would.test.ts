import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Database } from '../../../src/db/database.ts';
import { defineFlow } from '../../../src/index.ts';
import { markRunStuck } from '../../../src/store/mark-run-stuck.ts';
import { TestClock } from '../../../src/testing/test-clock.ts';
import { stepHistory } from '../../support/step-history.ts';
import { openTestDatabase, testDbKind } from '../../support/test-database.ts';
import { bareEngine } from '../harness.ts';
import { assertRunGuarantees, claimFor, drain, runJob } from './support/invariants.ts';
import { actions, effectsOf, otherFlow, stepOne, stepTwo, twoSteps } from './support/flows.ts';

/**
 * Attack 6, differentially: two runs set up alike, still Pending; one's wake is claimed by a worker
 * that marks it (ADR 0100) and replays from the claim's row; the other's by a claim that cannot
 * mark it (no flows passed), so its replay loads it as before. Both are then run to their end. The
 * two must end alike: the same history, the same row (status, stuck reason, waiting_for, version
 * moved by the same amount), the same side effects.
 */
const flows = [twoSteps, otherFlow];
const names = flows.map((f) => f.name);
/** Same name as twoSteps, another version, other steps: the worker's code for a run started as v1. */
const twoStepsV2 = defineFlow({
  name: 'r28-two-steps',
  version: 2,
  run: async (ctx, tag: string) => {
    await ctx.action(stepTwo, { tag });
    return ctx.action(stepOne, { tag });
  },
});

type Setup = (db: Database, runId: string, s: ReturnType<typeof bareEngine>, clock: TestClock) => Promise<void>;

describe(`the claim marks a Pending run exactly as the load would (${testDbKind()})`, () => {
  let db: Database;
  const clock = new TestClock();
  beforeAll(async () => {
    db = await openTestDatabase();
  });
  afterAll(async () => {
    await db.close();
  });

  const cases: [string, Setup, { expiresInSeconds?: number; workerFlows?: 'v2' }?][] = [
    ['plain', async () => undefined],
    [
      'stuck by the monitor while Pending',
      async (db, runId, _s, clock) => {
        await db.prisma.$transaction((tx) =>
          markRunStuck(tx, { runId, stuckReason: 'no_worker: r28 says so', now: clock.now() }),
        );
      },
    ],
    [
      'waiting_for set while Pending',
      async (db, runId) => {
        await db.prisma.flowRun.update({ where: { id: runId }, data: { waiting_for: 'something' } });
      },
    ],
    [
      'started_at set while Pending',
      async (db, runId, _s, clock) => {
        await db.prisma.flowRun.update({ where: { id: runId }, data: { started_at: clock.now() } });
      },
    ],
    [
      'cancel requested while Pending',
      async (_db, runId, s) => {
        await s.cancel(runId, { reason: 'r28', cleanupSeconds: 3600 });
      },
    ],
    [
      'expired while Pending',
      async (_db, _runId, s, clock) => {
        clock.advance(6_000);
        await s.sweepExpiredRuns();
      },
      { expiresInSeconds: 5 },
    ],
    ['a worker with another version of the flow', async () => undefined, { workerFlows: 'v2' }],
  ];

  for (const [name, setup, opts] of cases)
    it(name, async () => {
      const ends: unknown[] = [];
      for (const path of ['claim', 'load'] as const) {
        await db.prisma.job.deleteMany({});
        const tag = `${name}-${path}`;
        const s = bareEngine(db, { flows, actions, clock });
        const { runId } = await s.startFlow(
          twoSteps,
          tag,
          opts?.expiresInSeconds ? { expiresInSeconds: opts.expiresInSeconds } : {},
        );
        await setup(db, runId, s, clock);
        const before = await db.prisma.flowRun.findUniqueOrThrow({ where: { id: runId } });
        expect(before.status).toBe('Pending');
        const workerFlows = opts?.workerFlows === 'v2' ? [twoStepsV2, otherFlow] : flows;
        const worker = bareEngine(db, { flows: workerFlows, actions, clock });
        const jobs = await claimFor(worker, clock, path === 'claim' ? names : []);
        const mine = jobs.filter((j) => j.run_id === runId);
        expect(
          mine.some((j) => j.loaded),
          path,
        ).toBe(path === 'claim');
        const marked = await db.prisma.flowRun.findUniqueOrThrow({ where: { id: runId } });
        for (const j of jobs) await runJob(worker, j);
        await drain(worker, clock, names);
        const after = await db.prisma.flowRun.findUniqueOrThrow({ where: { id: runId } });
        await assertRunGuarantees(db, runId, { effects: effectsOf(tag) });
        ends.push({
          markedByClaim: path === 'claim' ? [marked.status, marked.stuck_reason, marked.waiting_for] : 'n/a',
          history: await stepHistory(db, runId),
          status: after.status,
          stuck: after.stuck_reason,
          waitingFor: after.waiting_for,
          versionMoved: after.version - before.version,
          startedAtMoved:
            before.started_at === null
              ? after.started_at !== null
              : after.started_at?.getTime() === before.started_at.getTime(),
          output: JSON.stringify(after.output ?? null).replaceAll(tag, 'TAG'),
          error: (after.error as { name?: string } | null)?.name ?? null,
          effects: [...effectsOf(tag).entries()],
        });
      }
      const [claimed, loaded] = ends as Record<string, unknown>[];
      const { markedByClaim, ...claimedEnd } = claimed!;
      const { markedByClaim: _n, ...loadedEnd } = loaded!;
      expect(markedByClaim).toEqual(['Running', null, null]);
      expect(claimedEnd).toEqual(loadedEnd);
    });
});

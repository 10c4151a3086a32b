import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { StepBuilder } from '../src/definitions/flow-context.ts';
import type { Json } from '../src/index.ts';
import { defineAction, defineFlow, NonRetryableError } from '../src/index.ts';
import { createTestEngine } from '../src/testing/create-test-engine.ts';
import { openTestDatabase, testDbKind } from './support/test-database.ts';
import type { Database } from '../src/db/database.ts';

const work = defineAction({ name: 'rr-work', run: async () => ({ ok: true }) });
const undo = defineAction({ name: 'rr-undo', run: async () => ({ undone: true }) });
const refuse = defineAction({
  name: 'rr-refuse',
  run: async (): Promise<null> => {
    throw new NonRetryableError('refused');
  },
});

type Tune = (b: StepBuilder<Json>) => StepBuilder<Json>;
/** The per-step settings of seed 000, on the action and, separately, on its compensation. */
const variants: [string, Tune, Tune, [number | null, number | null], [number | null, number | null]][] = [
  // label, action builder, compensation builder, [action row threshold: config off, on], [compensation: off, on]
  ['nothing', (b) => b, (b) => b, [null, 900], [null, 900]],
  [
    'enable(true)',
    (b) => b.enableStaleReclaim(true),
    (b) => b.enableCompensationStaleReclaim(true),
    [900, 900],
    [900, 900],
  ],
  [
    'enable(false)',
    (b) => b.enableStaleReclaim(false),
    (b) => b.enableCompensationStaleReclaim(false),
    [null, null],
    [null, null],
  ],
  [
    'threshold 1200',
    (b) => b.reclaimStaleAfter(1200),
    (b) => b.reclaimCompensationStaleAfter(1200),
    [1200, 1200],
    [1200, 1200],
  ],
  [
    'threshold + enable(false)',
    (b) => b.reclaimStaleAfter(1200).enableStaleReclaim(false),
    (b) => b.reclaimCompensationStaleAfter(1200).enableCompensationStaleReclaim(false),
    [1200, 1200],
    [1200, 1200],
  ],
  ['action only', (b) => b.reclaimStaleAfter(60), (b) => b, [60, 60], [null, 900]],
];

const flows = variants.map(([label, tuneAction, tuneComp]) =>
  defineFlow({
    name: `rr ${label}`,
    version: 1,
    run: async (ctx) => {
      try {
        await tuneComp(tuneAction(ctx.action(work, null)).compensateWith(undo, () => null));
        return await ctx.action(refuse, null);
      } catch (err) {
        await ctx.compensate();
        throw err;
      }
    },
  }),
);

/**
 * Reclaim precedence resolved at schedule time and persisted on the row (seed 000): every per-step
 * setting, on the action and on its compensation separately, under config off and on, read back from
 * action_runs / compensation_runs.reclaim_stale_after_seconds.
 */
describe(`reclaim thresholds written on the rows (${testDbKind()})`, () => {
  let db: Database;
  beforeAll(async () => {
    db = await openTestDatabase();
  });
  afterAll(async () => {
    await db.close();
  });

  for (const [i, enabled] of [false, true].entries()) {
    it(`config reclaim enabled=${String(enabled)}, after_seconds 900`, async () => {
      const t = await createTestEngine({
        db,
        flows,
        actions: [work, undo, refuse],
        config: {
          reclaim: { actions: { enabled, after_seconds: 900 }, compensations: { enabled, after_seconds: 900 } },
        },
      });
      try {
        for (const [v, [label, , , actionWant, compWant]] of variants.entries()) {
          const flow = flows[v];
          if (!flow) throw new Error('flow missing');
          const done = await t.runToCompletion(flow, null);
          expect(done.run.status, label).toBe('Compensated');
          const step = await db.prisma.actionRun.findFirstOrThrow({ where: { run_id: done.run.id, name: 'rr-work' } });
          const comp = await db.prisma.compensationRun.findFirstOrThrow({ where: { run_id: done.run.id } });
          expect([label, step.reclaim_stale_after_seconds, comp.reclaim_stale_after_seconds]).toEqual([
            label,
            actionWant[i],
            compWant[i],
          ]);
        }
      } finally {
        await t.close();
      }
    });
  }
});

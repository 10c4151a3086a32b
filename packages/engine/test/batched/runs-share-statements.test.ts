import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Database } from '../../src/db/database.ts';
import { defineAction, defineFlow } from '../../src/index.ts';
import { executeRun } from '../../src/runtime/execute-run.ts';
import { completedStepsHistory, stepHistory } from '../support/step-history.ts';
import { countStatements } from '../support/count-statements.ts';
import { openTestDatabase, testDbKind } from '../support/test-database.ts';
import { bareEngine } from '../regressions/harness.ts';

/**
 * ADR 0045: runs replayed side by side in one process share their transition and finish
 * statements, and each still ends with exactly one row, one execution and one history per step.
 */
const runs = 24;
const executed = new Map<string, number>();
const step = (name: string) =>
  defineAction({
    name,
    run: async (input: { run: number }) => {
      const key = `${input.run}:${name}`;
      executed.set(key, (executed.get(key) ?? 0) + 1);
      return { done: name, run: input.run };
    },
  });
const [one, two, three] = [step('shared-one'), step('shared-two'), step('shared-three')];
const flow = defineFlow({
  name: 'shared-statements',
  version: 1,
  run: async (ctx, input: { run: number }) => {
    await ctx.action(one, input);
    await ctx.action(two, input);
    return ctx.action(three, input);
  },
});

describe(`runs side by side share statements (${testDbKind()})`, () => {
  let db: Database;
  beforeAll(async () => {
    db = await openTestDatabase();
  });
  afterAll(async () => {
    await db.close();
  });

  it(`${runs} runs replayed at once: some statement carries several runs, and every run has one row, one execution and one history per step`, async () => {
    const counted = countStatements(db);
    const e = bareEngine(counted.db, { flows: [flow], actions: [one, two, three] });
    const started = await Promise.all(Array.from({ length: runs }, (_, n) => e.startFlow(flow, { run: n })));
    const ids = started.map((s) => s.runId);
    const ends = await Promise.all(ids.map((id) => executeRun(e.runtime, id)));
    expect(ends).toEqual(ids.map(() => 'finished'));

    const runsPer = (marker: string) =>
      counted.sent.filter((s) => s.text.includes(marker)).map((s) => (s.values[0] as unknown[]).length);
    const transitions = runsPer('sagaflow: step transitions');
    const finishes = runsPer('sagaflow: top-level run finishes');
    // Every transition and finish went out, in fewer statements than runs × steps.
    expect(transitions.reduce((a, b) => a + b, 0)).toBe(runs * 3);
    expect(finishes.reduce((a, b) => a + b, 0)).toBe(runs);
    expect(Math.max(...transitions), transitions.join(',')).toBeGreaterThan(1);
    expect(transitions.length).toBeLessThan(runs * 3);

    for (const [n, id] of ids.entries()) {
      const run = await db.prisma.flowRun.findUniqueOrThrow({ where: { id } });
      expect([run.status, run.output]).toEqual(['Completed', { done: 'shared-three', run: n }]);
      const rows = await db.prisma.actionRun.findMany({ where: { run_id: id }, orderBy: { sequence: 'asc' } });
      expect(rows.map((r) => [r.sequence, r.status, r.attempts, r.output])).toEqual(
        ['shared-one', 'shared-two', 'shared-three'].map((name, i) => [i + 1, 'Completed', 1, { done: name, run: n }]),
      );
      expect(await stepHistory(db, id)).toEqual(completedStepsHistory(3));
      for (const name of ['shared-one', 'shared-two', 'shared-three']) expect(executed.get(`${n}:${name}`)).toBe(1);
    }
  });
});

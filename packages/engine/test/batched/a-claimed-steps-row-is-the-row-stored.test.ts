import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Json } from '../../src/definitions/define-action.ts';
import type { Database } from '../../src/db/database.ts';
import type { InputShape } from '../../src/store/batched-statement.ts';
import { insertStartedRun, type StartedRun } from '../../src/store/insert-started-run.ts';
import {
  insertStartedRunsWithStepStatement,
  startedWithStepResults,
} from '../../src/store/insert-started-run-with-step.ts';
import type { NewStep } from '../../src/store/insert-step.ts';
import type { DbActionRun } from '../../src/store/list-action-runs.ts';
import {
  stepTransitionResults,
  stepTransitionsStatement,
  type StepTransition,
} from '../../src/store/step-transitions.ts';
import { openTestDatabase, testDbKind } from '../support/test-database.ts';

/**
 * ADR 0095: a statement that inserts a step already claimed (a step transition, a start with its
 * first step) reads back only the columns the server chose, and the replay works from a row built
 * from what it sent. That row must be the row stored, column for column, whatever the step's
 * options (a reclaim window or none, a deadline or none, a parallel block), in both input shapes,
 * alone and beside another item, so a column added to the table or a default changed in a
 * migration is caught here and not in a replay that trusts a wrong value.
 */
const worker = 'claimed-row-worker';
const now = new Date('2026-06-01T12:00:00.123Z');
const input: Json = { zeta: 1, a: 'ünï ✓', 'é-key': [1, { y: 2, x: null }], q: `it's "quoted" \\ {a,b}` };

const steps: Omit<NewStep, 'runId' | 'sequence'>[] = [
  { kind: 'action', name: 'plain', input },
  {
    kind: 'action',
    name: 'with-everything',
    input,
    maxAttempts: 4,
    parallelBlock: 7,
    reclaimAfterSeconds: 30,
    expiresAt: new Date(now.getTime() + 90_000),
  },
  {
    kind: 'action',
    name: 'deadline-only',
    input: [],
    reclaimAfterSeconds: null,
    expiresAt: new Date(now.getTime() + 1),
  },
];

describe(`a claimed step's row, as the replay gets it, is the row stored (${testDbKind()})`, () => {
  let db: Database;
  let n = 0;
  beforeAll(async () => {
    db = await openTestDatabase();
  });
  afterAll(async () => {
    await db.close();
  });

  const stored = (id: string) => db.prisma.actionRun.findUniqueOrThrow({ where: { id } });

  const startedRun = (): StartedRun => ({
    flowName: 'claimed-row',
    flowVersion: 1,
    input,
    businessKey: `claimed-row-${++n}`,
    tags: [],
    expiresAt: null,
    runTimeoutAt: null,
    now,
    lease: { workerId: worker, leaseSeconds: 60 },
  });

  const expectStored = async (row: DbActionRun | null | undefined) => {
    expect(row, 'the statement claimed the step').toBeTruthy();
    // toEqual compares objects' keys as sets: jsonb orders the input's keys its own way.
    expect(row).toEqual(await stored(row!.id));
  };

  for (const shape of ['scalars', 'arrays'] as InputShape[])
    for (const [i, step] of steps.entries())
      it(`a transition's new step (${step.name}, ${shape}), alone and beside another run's`, async () => {
        const transition = (runId: string, sequence: number): StepTransition => ({
          step: { ...step, runId, sequence },
          workerId: `${worker}-${i}`,
          now: new Date(now.getTime() + i),
          cancellationKnown: false,
          started: { type: 'action.started', sequence, data: { name: step.name } },
        });
        const runs: string[] = [];
        for (const _ of [1, 2]) runs.push((await insertStartedRun(db.prisma, startedRun())).runId);
        const items = shape === 'scalars' ? [transition(runs[0]!, 1)] : runs.map((id, k) => transition(id, k + 1));
        const results = stepTransitionResults(items, await db.driver.statement(stepTransitionsStatement(items, shape)));
        expect(results).toHaveLength(items.length);
        for (const result of results) await expectStored(result.row);
      });

  for (const shape of ['scalars', 'arrays'] as InputShape[])
    it(`a start's first step (${shape})`, async () => {
      const starts = steps.slice(0, shape === 'scalars' ? 1 : undefined).map((step, i) => ({
        id: randomUUID(),
        run: startedRun(),
        // The run's id is the start's own: the step's is not read (the lone-item test sends '').
        step: { ...step, runId: '', sequence: 1 },
        started: { type: 'action.started', sequence: 1, data: { name: step.name } },
        workerId: `${worker}-${i}`,
        claimedAt: new Date(now.getTime() + i),
      }));
      const results = startedWithStepResults(
        starts,
        await db.driver.statement(insertStartedRunsWithStepStatement(starts, shape)),
      );
      expect(results).toHaveLength(starts.length);
      for (const result of results) await expectStored(result.loaded?.firstStep);
    });
});

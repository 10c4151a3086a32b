import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Database } from '../../../src/db/database.ts';
import { isStalePlan } from '../../../src/db/run-in-transaction.ts';
import {
  stepTransitionResults,
  stepTransitionsStatement,
  type StepTransition,
  type TransitionOutcome,
} from '../../../src/store/step-transitions.ts';
import { activeRun } from '../../support/active-run.ts';
import { openTestDatabase, testDbKind } from '../../support/test-database.ts';

/**
 * ADR 0062 gave the step transition four texts (outcome tables × input shapes), each prepared under
 * its own name on each connection. A transition used to return its new step's row whole (`c.*`), so
 * a column added to action_runs while the process ran (a rolling upgrade's migration) made the server
 * refuse each of the four prepared texts once ("cached plan must not change result type"). Since ADR
 * 0095 it returns the columns it names, so such a column changes no text's result and none is refused.
 * Where one is refused all the same, the refusal must be a stale plan that wrote nothing and the
 * resend must record the outcome once. One connection, so every text meets the plan it prepared
 * before the column came.
 */
const worker = 'review13-four-texts';
type Combo = { tables: 'actions' | 'steps'; items: 1 | 2 };
const combos: Combo[] = [
  { tables: 'actions', items: 1 },
  { tables: 'actions', items: 2 },
  { tables: 'steps', items: 1 },
  { tables: 'steps', items: 2 },
];

describe(`the four transition texts after a column is added to action_runs (${testDbKind()})`, () => {
  let db: Database;
  let flows = 0;
  beforeAll(async () => {
    db = await openTestDatabase({ poolSize: 1 });
  });
  afterAll(async () => {
    await db.close();
  });

  const transition = (runId: string, sequence: number, outcome?: TransitionOutcome): StepTransition => ({
    step: { runId, sequence, kind: 'action', name: `step-${sequence}`, input: {} },
    workerId: worker,
    now: new Date(),
    cancellationKnown: false,
    started: { type: 'action.started', sequence, data: {} },
    ...(outcome ? { outcome } : {}),
  });

  /** A run at its step 1, Running: an action's (claimed by a lone transition) or a compensation's. */
  const runWithStep = async (table: TransitionOutcome['table']) => {
    const runId = await activeRun(db, `review13-four-${++flows}`, worker);
    let id: string;
    if (table === 'action_runs') {
      const [claimed] = await db.driver.query<{ id: string }>(
        `insert into "sagaflow"."action_runs" (run_id, sequence, kind, name, input, status, attempts, claimed_by)
         values ($1, 1, 'action', 'step-1', '{}', 'Running', 1, $2) returning id`,
        [runId, worker],
      );
      id = claimed!.id;
    } else {
      const [row] = await db.driver.query<{ id: string }>(
        `insert into "sagaflow"."compensation_runs" (run_id, action_sequence, name, status, input, attempts, claimed_by)
         values ($1, 1, 'undo-1', 'Running', '{}', 1, $2) returning id`,
        [runId, worker],
      );
      id = row!.id;
    }
    const prefix = table === 'action_runs' ? 'action' : 'compensation';
    const outcome: TransitionOutcome = {
      table,
      id,
      attempts: 1,
      outcome: { kind: 'completed', output: { of: runId } },
      event: { type: `${prefix}.completed`, sequence: 1, data: {} },
    };
    return { runId, outcome };
  };

  /** One transition statement of `combo`'s text, on fresh runs. */
  const statementOf = async (combo: Combo) => {
    const first = await runWithStep(combo.tables === 'steps' ? 'compensation_runs' : 'action_runs');
    const runs = combo.items === 1 ? [first] : [first, await runWithStep('action_runs')];
    const items = runs.map((r) => transition(r.runId, 2, r.outcome));
    const statement = stepTransitionsStatement(items);
    expect(statement.text.includes('compensation_runs')).toBe(combo.tables === 'steps');
    return { runs, items, statement };
  };

  const recordedOnce = async (runs: { runId: string; outcome: TransitionOutcome }[]) => {
    for (const { runId, outcome } of runs) {
      const done = await db.driver.query<{ n: number }>(
        `select count(*)::int as n from "sagaflow"."flow_events" where run_id = $1 and type = $2 and row_id = $3`,
        [runId, outcome.event.type, outcome.id],
      );
      const second = await db.driver.query<{ n: number }>(
        `select count(*)::int as n from "sagaflow"."action_runs" where run_id = $1 and sequence = 2`,
        [runId],
      );
      expect([done[0]!.n, second[0]!.n]).toEqual([1, 1]);
    }
  };

  it('none is refused, and each records once', async () => {
    // Every text prepared on the one connection before the column comes.
    for (const combo of combos) {
      const { runs, items, statement } = await statementOf(combo);
      const results = stepTransitionResults(items, await db.driver.statement(statement));
      expect(results.map((r) => r.recorded)).toEqual(runs.map(() => true));
    }

    await db.driver.query(`alter table "sagaflow"."action_runs" add column review13_note text`);

    const refusals: string[] = [];
    for (const combo of combos) {
      const { runs, items, statement } = await statementOf(combo);
      const refused = await db.driver.statement(statement).then(
        (result) => ({ result }),
        (err: unknown) => ({ err }),
      );
      let results;
      if ('err' in refused) {
        refusals.push(`${combo.tables}/${combo.items}`);
        expect(isStalePlan(refused.err), `${JSON.stringify(combo)}: ${String(refused.err)}`).toBe(true);
        expect((refused.err as { retryable?: boolean }).retryable).toBe(true);
        const events = await db.driver.query<{ n: number }>(
          `select count(*)::int as n from "sagaflow"."flow_events"
            where run_id = any($1::uuid[]) and type not in ('run.started', 'run.running')`,
          [runs.map((r) => r.runId)],
        );
        expect(events[0]!.n, 'a refused statement wrote nothing').toBe(0);
        results = stepTransitionResults(items, await db.driver.statement(statement));
      } else results = stepTransitionResults(items, refused.result);
      expect(results.map((r) => [r.recorded, r.row?.sequence])).toEqual(runs.map(() => [true, 2]));
      await recordedOnce(runs);
    }
    // The column is in none of the texts' results: no text is refused, on either database.
    expect(refusals).toEqual([]);
  });
});

import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Database } from '../../../src/db/database.ts';
import type { InputShape } from '../../../src/store/batched-statement.ts';
import { finishTopRunResults, finishTopRunsStatement, type TopRunFinish } from '../../../src/store/finish-top-runs.ts';
import {
  stepTransitionResults,
  stepTransitionsStatement,
  type StepTransition,
  type TransitionOutcome,
} from '../../../src/store/step-transitions.ts';
import { activeRun } from '../../support/active-run.ts';
import { openTestDatabase, testDbKind } from '../../support/test-database.ts';

/**
 * ADR 0062 decision 2 reviewed (ADR 0069): a transition or finish whose items carry no compensation's
 * outcome is sent in a text without the compensation_runs arm; one compensation's outcome in the
 * batch switches the whole statement to the text with both arms. Random batches mix runs whose last
 * step is an action, a compensation, or none; each step row may have been reclaimed meanwhile (its
 * attempts moved on), swept as expired, or be as the claim left it; each run may be open, open but
 * expired (rolling back: a compensation's outcome arrives after the expiry), or already ended. The
 * batch goes in either statement kind, as a lone item's scalars or as arrays, and is then sent a
 * second time (an answer lost and the statement resent). Checked against a model per item: an
 * outcome is recorded exactly when its run is open and its row is Running under the attempts its
 * claim produced, with exactly one event; nothing is recorded, inserted or ended twice; nothing is
 * written to a run that had ended.
 */
const worker = 'review13-outcome-texts';

type StepKind = 'none' | 'action' | 'compensation';
type StepState = 'claimed' | 'reclaimed' | 'expired';
type RunState = 'open' | 'expiredRollingBack' | 'ended';
interface Item {
  step: StepKind;
  stepState: StepState;
  run: RunState;
  outcome: 'completed' | 'errored';
}
interface Seeded extends Item {
  runId: string;
  outcome: Item['outcome'];
  prev?: TransitionOutcome;
}

const itemArb: fc.Arbitrary<Item> = fc.record({
  step: fc.constantFrom<StepKind>('none', 'action', 'compensation'),
  stepState: fc.constantFrom<StepState>('claimed', 'reclaimed', 'expired'),
  run: fc.constantFrom<RunState>('open', 'expiredRollingBack', 'ended'),
  outcome: fc.constantFrom('completed' as const, 'errored' as const),
});
const caseArb = fc.record({
  kind: fc.constantFrom('transition' as const, 'finish' as const),
  items: fc.array(itemArb, { minLength: 1, maxLength: 5 }),
  // A lone item is sent as scalars by default; its arrays text is checked as well.
  loneAsArrays: fc.boolean(),
});

describe(`transitions and finishes record each outcome once, whatever their outcome tables (${testDbKind()})`, () => {
  let db: Database;
  let flows = 0;
  beforeAll(async () => {
    db = await openTestDatabase();
  });
  afterAll(async () => {
    await db.close();
  });

  /** A run written active with its last step in the item's table and state, and that step's outcome. */
  const seed = async (item: Item): Promise<Seeded> => {
    const runId = await activeRun(db, `review13-texts-${++flows}`, worker);
    let prev: TransitionOutcome | undefined;
    if (item.step !== 'none') {
      let id: string;
      let table: TransitionOutcome['table'];
      if (item.step === 'action') {
        table = 'action_runs';
        const claim = stepTransition(runId, 1);
        const [claimed] = stepTransitionResults([claim], await db.driver.statement(stepTransitionsStatement([claim])));
        id = claimed!.row!.id;
      } else {
        table = 'compensation_runs';
        const [row] = await db.driver.query<{ id: string }>(
          `insert into "sagaflow"."compensation_runs" (run_id, action_sequence, name, status, input, attempts, claimed_by)
           values ($1, 1, 'undo-1', 'Running', '{}', 1, $2) returning id`,
          [runId, worker],
        );
        id = row!.id;
      }
      if (item.stepState === 'reclaimed')
        await db.driver.query(`update "sagaflow"."${table}" set attempts = attempts + 1 where id = $1`, [id]);
      if (item.stepState === 'expired')
        await db.driver.query(`update "sagaflow"."${table}" set status = 'Expired' where id = $1`, [id]);
      const prefix = table === 'action_runs' ? 'action' : 'compensation';
      prev = {
        table,
        id,
        attempts: 1,
        outcome:
          item.outcome === 'completed'
            ? { kind: 'completed', output: { done: runId } }
            : { kind: 'errored', error: { message: 'no' } },
        event: { type: `${prefix}.${item.outcome}`, sequence: 1, data: {} },
      };
    }
    if (item.run === 'expiredRollingBack')
      await db.driver.query(
        `update "sagaflow"."flow_runs" set status = 'Compensating', expired_at = now() where id = $1`,
        [runId],
      );
    if (item.run === 'ended')
      await db.driver.query(
        `update "sagaflow"."flow_runs" set status = 'Expired', expired_at = now(), finished_at = now() where id = $1`,
        [runId],
      );
    return { ...item, runId, ...(prev ? { prev } : {}) };
  };

  const stepTransition = (runId: string, sequence: number, outcome?: TransitionOutcome): StepTransition => ({
    step: { runId, sequence, kind: 'action', name: `step-${sequence}`, input: { n: sequence } },
    workerId: worker,
    now: new Date(),
    cancellationKnown: false,
    started: { type: 'action.started', sequence, data: {} },
    ...(outcome ? { outcome } : {}),
  });
  const finish = (s: Seeded): TopRunFinish => ({
    runId: s.runId,
    status: s.step === 'compensation' ? 'Compensated' : 'Completed',
    data: {},
    now: new Date(),
    ...(s.prev ? { outcome: s.prev } : {}),
  });

  /** What the store holds of one seeded run: its status, its step row's, and its events by type. */
  const stored = async (s: Seeded) => {
    const [run] = await db.driver.query<{ status: string }>(`select status from "sagaflow"."flow_runs" where id = $1`, [
      s.runId,
    ]);
    const events = await db.driver.query<{ type: string; row_id: string | null }>(
      `select type, row_id::text from "sagaflow"."flow_events" where run_id = $1 order by id`,
      [s.runId],
    );
    const [step] = s.prev
      ? await db.driver.query<{ status: string; attempts: number }>(
          `select status, attempts from "sagaflow"."${s.prev.table}" where id = $1`,
          [s.prev.id],
        )
      : [];
    const [second] = await db.driver.query<{ count: number }>(
      `select count(*)::int as count from "sagaflow"."action_runs" where run_id = $1 and sequence = 2`,
      [s.runId],
    );
    return { run: run!.status, step, events, secondSteps: second!.count };
  };

  it('matches the model on every batch, sent once and then again', async () => {
    await fc.assert(
      fc.asyncProperty(caseArb, async ({ kind, items, loneAsArrays }) => {
        const seeded: Seeded[] = [];
        for (const item of items) seeded.push(await seed(item));
        const shape: InputShape | undefined = items.length === 1 && loneAsArrays ? 'arrays' : undefined;
        const transitions = seeded.map((s) => stepTransition(s.runId, 2, s.prev));
        const statement =
          kind === 'transition'
            ? stepTransitionsStatement(transitions, shape)
            : finishTopRunsStatement(seeded.map(finish), shape);
        // The text names compensation_runs exactly when an item's outcome is in it (ADR 0062).
        expect(statement.text.includes('compensation_runs')).toBe(seeded.some((s) => s.step === 'compensation'));

        const send = async () => {
          const result = await db.driver.statement(statement);
          return kind === 'transition'
            ? stepTransitionResults(transitions, result).map((r) => ({
                runOpen: r.runOpen,
                recorded: r.recorded,
                wrote: r.row !== null,
              }))
            : finishTopRunResults(result).map((status) => ({ status }));
        };

        const first = await send();
        const afterFirst = await Promise.all(seeded.map(stored));
        const again = await send();
        const afterAgain = await Promise.all(seeded.map(stored));

        seeded.forEach((s, n) => {
          const runOpen = s.run !== 'ended';
          const fenceHolds = s.prev !== undefined && runOpen && s.stepState === 'claimed';
          const proceeds = runOpen && (s.prev === undefined || fenceHolds);
          const what = JSON.stringify({ kind, ...items[n] });
          if (kind === 'transition') {
            expect(first[n], what).toEqual({ runOpen, recorded: fenceHolds, wrote: proceeds });
            // Sent again: the run is as open as it was, and nothing is recorded or inserted twice.
            expect(again[n], what).toEqual({ runOpen, recorded: false, wrote: false });
            expect(afterFirst[n]!.secondSteps, what).toBe(proceeds ? 1 : 0);
          } else {
            const ended = s.run === 'expiredRollingBack' ? 'Expired' : finish(s).status;
            expect(first[n], what).toEqual({ status: proceeds ? ended : null });
            expect(again[n], what).toEqual({ status: null });
            expect(afterFirst[n]!.run, what).toBe(
              proceeds ? ended : s.run === 'ended' ? 'Expired' : s.run === 'open' ? 'Running' : 'Compensating',
            );
          }
          if (s.prev) {
            const done = afterFirst[n]!.events.filter((e) => e.type === s.prev!.event.type && e.row_id === s.prev!.id);
            expect(done.length, what).toBe(fenceHolds ? 1 : 0);
            const status = { completed: 'Completed', errored: 'Errored' }[s.outcome];
            const before = s.stepState === 'expired' ? 'Expired' : 'Running';
            expect(afterFirst[n]!.step, what).toEqual({
              status: fenceHolds ? status : before,
              attempts: s.stepState === 'reclaimed' ? 2 : 1,
            });
          }
          // A second send changed nothing at all.
          expect(afterAgain[n], what).toEqual(afterFirst[n]);
          // Nothing after the end: a run's terminal event is its last, and there is at most one.
          const terminal = afterFirst[n]!.events.filter((e) => /^run\.(completed|compensated|expired)$/.test(e.type));
          expect(terminal.length, what).toBe(kind === 'finish' && proceeds ? 1 : 0);
          if (terminal.length > 0) expect(afterFirst[n]!.events.at(-1)!.type, what).toBe(terminal[0]!.type);
        });
      }),
      { numRuns: testDbKind() === 'postgres' ? 40 : 15 },
    );
  });
});

import type { TransitionOutcome } from './step-transitions.ts';
import { statusInText } from './keyed-status.ts';

/** One array parameter of a set-based statement (ADR 0045): a column of its `input`, one value per item. */
export interface InputColumn<T> {
  name: string;
  /** The element's SQL type (the parameter is cast to an array of it). */
  type: string;
  of: (item: T) => unknown;
}

/**
 * How a set-based statement's `input` carries its items (ADR 0053): `arrays`, one array per column,
 * unnested, for any number of items; `scalars`, one parameter per column, for exactly one item. The
 * lone item is every statement at c=1 and many at c=8, and as arrays it cost pg an array literal per
 * column (each element escaped) and the server a parse of each and an unnest.
 */
export type InputShape = 'arrays' | 'scalars';

/**
 * Array parameter `n` of type `type`[] as a statement's body reads it: through a scalar subquery, so
 * the planner does not know its length, neither in a custom plan (made with the values) nor in the
 * generic one (ADR 0098). Its estimate is then the same in both, so PostgreSQL keeps the generic plan
 * made after five executions instead of planning every execution again: with a batch's length in the
 * custom plans, a plan that finds each item's rows by their keys costs the custom plan less than the
 * generic plan's estimate of ten items, and PostgreSQL would plan every batch anew.
 */
export const arrayParam = (n: number, type: string): string => `(select $${n}::${type}[])::${type}[]`;

/** The shape a statement for `items` is sent in: scalars for a lone item, arrays otherwise. */
export const inputShapeFor = (items: readonly unknown[]): InputShape => (items.length === 1 ? 'scalars' : 'arrays');

/**
 * The `input` CTE's body: the columns side by side, the first `columns.length` parameters, and `k`,
 * each item's place (from 1, a bigint as `with ordinality` gives). Its text depends only on the
 * columns and the shape, never on the number of items. In both shapes the first parameter is an array
 * (of one value for `scalars`): the statements' bodies find their runs with `= any(${arrayParam(1, 'uuid')})`.
 */
function inputCte<T>(columns: readonly InputColumn<T>[], shape: InputShape): string {
  if (shape === 'arrays') {
    // The first array hidden is enough: unnest's estimate is its longest argument's, ten for a hidden one.
    const arrays = columns.map((c, n) => (n === 0 ? arrayParam(1, c.type) : `$${n + 1}::${c.type}[]`)).join(', ');
    return `select * from unnest(${arrays}) with ordinality as i(${columns.map((c) => c.name).join(', ')}, k)`;
  }
  const scalars = columns.map((c, n) => (n === 0 ? `($1::${c.type}[])[1]` : `$${n + 1}::${c.type}`) + ` as ${c.name}`);
  return `select ${scalars.join(', ')}, 1::bigint as k`;
}

/** The parameters of {@link inputCte} for `items` in `shape` (`scalars`: exactly one item). */
export function inputValues<T>(columns: readonly InputColumn<T>[], items: readonly T[], shape: InputShape): unknown[] {
  if (shape === 'arrays') return columns.map((c) => items.map(c.of));
  if (items.length !== 1) throw new Error(`a statement of scalars carries one item, not ${items.length}`);
  const [item] = items as [T];
  return columns.map((c, n) => (n === 0 ? [c.of(item)] : c.of(item)));
}

/**
 * A set-based statement's two texts, one per {@link InputShape}, built by `body` around its `input`
 * CTE: one body for both, so what the lone item's statement writes cannot drift from the batch's.
 */
export function setBasedTexts<T>(
  columns: readonly InputColumn<T>[],
  body: (input: string) => string,
): Record<InputShape, string> {
  return { arrays: body(inputCte(columns, 'arrays')), scalars: body(inputCte(columns, 'scalars')) };
}

const statusOf = { completed: 'Completed', failed: 'Failed', errored: 'Errored' } as const;

/**
 * The input columns of a step outcome written under recordStepOutcome's fence ({@link fencedOutcomes}):
 * its row, the attempts its claim produced, what recordStepOutcome's SET list writes, and its event.
 * All null for an item without one.
 */
export function outcomeColumns<T>(outcomeOf: (item: T) => TransitionOutcome | undefined): InputColumn<T>[] {
  const value = (of: (o: TransitionOutcome) => unknown) => (item: T) => {
    const o = outcomeOf(item);
    return o ? (of(o) ?? null) : null;
  };
  return [
    { name: 'prev_table', type: 'text', of: value((o) => o.table) },
    { name: 'prev_id', type: 'uuid', of: value((o) => o.id) },
    { name: 'prev_attempts', type: 'int', of: value((o) => o.attempts) },
    { name: 'prev_status', type: 'text', of: value((o) => statusOf[o.outcome.kind]) },
    {
      name: 'prev_output',
      type: 'text',
      of: value((o) => (o.outcome.kind === 'completed' ? JSON.stringify(o.outcome.output) : null)),
    },
    {
      name: 'prev_error',
      type: 'text',
      of: value((o) => (o.outcome.kind === 'completed' ? null : JSON.stringify(o.outcome.error))),
    },
    {
      name: 'prev_retry_at',
      type: 'timestamptz',
      of: value((o) => (o.outcome.kind === 'failed' ? o.outcome.retryAt : null)),
    },
    { name: 'done_type', type: 'text', of: value((o) => o.event.type) },
    { name: 'done_sequence', type: 'int', of: value((o) => o.event.sequence) },
    { name: 'done_data', type: 'text', of: value((o) => JSON.stringify(o.event.data)) },
  ];
}

/**
 * recordStepOutcome's fence as a set-based UPDATE. The row is found by its primary key only (ADR 0125):
 * its run is compared with `is not distinct from` (the same test here, both sides never null), which no
 * index can serve, and the run's lock is checked on the input's run, not the row's. With `s.run_id =
 * i.run_id` the planner could (and on a table without statistics did) reach the row through
 * `(run_id, sequence)` with run_id alone and read every step the run had: step k read k rows.
 */
const fencedUpdate = (table: 'action_runs' | 'compensation_runs') => `
      update "sagaflow"."${table}" s
         set status = i.prev_status, output = i.prev_output::jsonb, error = i.prev_error::jsonb,
             available_at = coalesce(i.prev_retry_at, s.available_at), reclaim_stale_at = null,
             updated_at = i.now, finished_at = case when i.prev_status = 'Failed' then null else i.now end
        from input i
       where i.prev_table = '${table}' and s.id = i.prev_id and s.run_id is not distinct from i.run_id
         and i.run_id in (select id from run) and s.attempts = i.prev_attempts and ${statusInText('s.status', ['Running'])}
      returning s.id, s.run_id, s.attempts`;

/**
 * The step tables a set-based statement's outcomes may be in (ADR 0062): `actions` when none of its
 * items records a compensation's outcome, the hot path's case; `steps` otherwise.
 */
export type OutcomeTables = 'actions' | 'steps';

/** The {@link OutcomeTables} a statement carrying `outcomes` (one per item, or none) needs. */
export const outcomeTablesFor = (outcomes: readonly (TransitionOutcome | undefined)[]): OutcomeTables =>
  outcomes.some((o) => o?.table === 'compensation_runs') ? 'steps' : 'actions';

/**
 * The CTEs ending in `upd` of a set-based statement: each item's outcome (the {@link outcomeColumns}
 * of `input`, with its `now` and `run_id`) under exactly recordStepOutcome's fence and SET list, in
 * its table, only in a run the statement's `run` CTE locked. `upd` returns id, run_id and attempts of
 * each outcome recorded. For `actions` the statement names no compensation_runs at all: an UPDATE arm
 * that matches nothing still locks its table, sets up its plan nodes and scans the table on every
 * execution (ADR 0062), so it is only in the text of a statement that carries a compensation's outcome.
 */
export const fencedOutcomes = (tables: OutcomeTables): string =>
  tables === 'actions'
    ? `, upd as (${fencedUpdate('action_runs')}
    )`
    : `, upd_a as (${fencedUpdate('action_runs')}
    ), upd_c as (${fencedUpdate('compensation_runs')}
    ), upd as (
      select * from upd_a union all select * from upd_c
    )`;

/** A set-based statement's texts per {@link OutcomeTables}, then per {@link InputShape}, from one body. */
export function setBasedOutcomeTexts<T>(
  columns: readonly InputColumn<T>[],
  body: (input: string, outcomes: string) => string,
): Record<OutcomeTables, Record<InputShape, string>> {
  return {
    actions: setBasedTexts(columns, (input) => body(input, fencedOutcomes('actions'))),
    steps: setBasedTexts(columns, (input) => body(input, fencedOutcomes('steps'))),
  };
}

/** The rows (k, ord, run_id, type, sequence, row_id, data) of each recorded outcome's event, for an ordered insert. */
export const outcomeEventRows = (ord: number) => `
        select i.k, ${ord} as ord, u.run_id, i.done_type as type, i.done_sequence as sequence, u.id as row_id,
               i.done_data::jsonb || jsonb_build_object('attempt', u.attempts) as data
          from upd u join input i on i.prev_id = u.id`;

import { Prisma } from '../generated/prisma/client.ts';

/**
 * The status tests of a statement that finds its rows by a key (a run or a step by its id, a run's
 * children by their parent): calls of migration 0027's functions, never a plain `status in (…)`
 * (ADR 0098).
 *
 * A plain test lets the planner read the row through an index of that status instead (the open runs'
 * index, the Running steps' index): the cheapest path while few rows have the status, by the
 * statistics of the last ANALYZE. A statement's plan is prepared once per connection and kept, and
 * the statistics lag behind the table: once thousands of runs open at once (an outage downstream, a
 * burst of starts), every such statement would read all of them, until an ANALYZE comes. A call
 * matches no index, and the functions' declared cost makes a sequential scan, which would call it
 * for every row, dearer than the key's index even on a small table.
 *
 * A sweep that looks for rows BY their status keeps the plain test: the status's index is its path.
 */
const call = (fn: 'run_is_open' | 'step_is_running', column: string) => `"sagaflow"."${fn}"(${column})`;

/** `column` (a run's status) is open: Pending, Running, Waiting or Compensating. */
export const openRunByKeyText = (column: string): string => call('run_is_open', column);

/** `column` (a step's status) is Running. */
export const runningStepByKeyText = (column: string): string => call('step_is_running', column);

/** {@link openRunByKeyText} as a fragment of a Prisma.sql statement. */
export const openRunByKey = (column: string): Prisma.Sql => Prisma.raw(openRunByKeyText(column));

/** {@link runningStepByKeyText} as a fragment of a Prisma.sql statement. */
export const runningStepByKey = (column: string): Prisma.Sql => Prisma.raw(runningStepByKeyText(column));

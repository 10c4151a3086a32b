import { Prisma } from '../generated/prisma/client.ts';
import { openRunStatuses } from './types.ts';

/**
 * The status test of a statement that finds its rows by a key (a run or a step by its id, a run's
 * children by their parent, an outbox row, a timeout, an instance): a call of migration 0027's
 * `status_in`, never a plain `status in (…)` (ADR 0098).
 *
 * A plain test lets the planner read the rows through an index of that status instead (the open
 * runs' index, the Running or Waiting steps', the pending outbox rows'): the cheapest path while few
 * rows have the status, by the statistics of the last ANALYZE. A statement's plan is prepared once per
 * connection and kept, and the statistics lag behind the table: once thousands of rows take the
 * status at once (an outage downstream, a burst of starts), every such statement would read all of
 * them, until an ANALYZE comes. A call matches no index, and the function's declared cost makes a
 * sequential scan, which would call it for every row, dearer than the key's index even on a small table.
 *
 * A sweep that looks for rows BY their status keeps the plain test: the status's index is its path.
 */
export function statusInText(column: string, statuses: readonly string[]): string {
  // Written into the text as an array literal: a status is a word (no quote, comma, brace or space).
  for (const s of statuses) if (!/^[A-Za-z_]+$/.test(s)) throw new Error(`not a status: ${JSON.stringify(s)}`);
  return `"sagaflow"."status_in"(${column}, '{${statuses.join(',')}}'::text[])`;
}

/** `column` (a run's status) is open: Pending, Running, Waiting or Compensating. */
export const openRunByKeyText = (column: string): string => statusInText(column, openRunStatuses);

/** {@link statusInText} as a fragment of a Prisma.sql statement. */
export const statusIn = (column: string, statuses: readonly string[]): Prisma.Sql =>
  Prisma.raw(statusInText(column, statuses));

/** {@link openRunByKeyText} as a fragment of a Prisma.sql statement. */
export const openRunByKey = (column: string): Prisma.Sql => Prisma.raw(openRunByKeyText(column));

/** The test against one status given as a value (a parameter of the statement). */
export const statusIs = (column: string, status: string): Prisma.Sql =>
  Prisma.sql`"sagaflow"."status_in"(${Prisma.raw(column)}, array[${status}]::text[])`;

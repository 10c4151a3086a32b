import { toActionView, toCompensationView, toFlowEventView } from '../runtime/run-view.ts';
import type { ActionView, CompensationView, FlowEventView } from '../runtime/run-view.ts';
import type { HistoryWindow } from '../store/history/history-window.ts';
import { pageActionRuns } from '../store/history/page-action-runs.ts';
import { pageCompensationRuns, type CompensationKey } from '../store/history/page-compensation-runs.ts';
import { pageFlowEvents } from '../store/history/page-flow-events.ts';
import type { Db } from '../store/types.ts';

/**
 * One window of a run's history (ADR 0035): the rows in the order read (newest first, or oldest
 * first after an `after` key) and whether more lie past the last one in that direction.
 */
export interface HistoryPage<T> {
  rows: T[];
  more: boolean;
}

export type { CompensationKey, HistoryWindow };

/** The database handle, or an open transaction on it (`{ prisma: tx }`): a poll reads in one snapshot. */
export interface HistoryReader {
  prisma: Db;
}

/** Reads one row past the page: its presence is what `more` says, without a count. */
async function windowPage<R, T>(read: (limit: number) => Promise<R[]>, limit: number, view: (r: R) => T) {
  const rows = await read(limit + 1);
  return { rows: rows.slice(0, limit).map(view), more: rows.length > limit } satisfies HistoryPage<T>;
}

/** A window of a run's steps by sequence. */
export function pageRunSteps(
  db: HistoryReader,
  runId: string,
  w: HistoryWindow<number>,
): Promise<HistoryPage<ActionView>> {
  return windowPage((limit) => pageActionRuns(db.prisma, runId, { ...w, limit }), w.limit, toActionView);
}

/** A window of a run's compensations by (rollback level, ordinal). */
export function pageRunCompensations(
  db: HistoryReader,
  runId: string,
  w: HistoryWindow<CompensationKey>,
): Promise<HistoryPage<CompensationView>> {
  return windowPage((limit) => pageCompensationRuns(db.prisma, runId, { ...w, limit }), w.limit, toCompensationView);
}

/** A window of a run's events by id. */
export function pageRunEvents(
  db: HistoryReader,
  runId: string,
  w: HistoryWindow<bigint>,
): Promise<HistoryPage<FlowEventView>> {
  return windowPage((limit) => pageFlowEvents(db.prisma, runId, { ...w, limit }), w.limit, toFlowEventView);
}

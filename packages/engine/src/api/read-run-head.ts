import type { Database } from '../db/database.ts';
import { isUuid } from '../input/assert-uuid.ts';
import { toAnomalyView, toFlowEventView, toRunView } from '../runtime/run-view.ts';
import type { ActionView, AnomalyView, CompensationView, FlowEventView, RunView } from '../runtime/run-view.ts';
import { findRun } from '../store/find-run.ts';
import { listRunAnomalies } from '../store/history/list-run-anomalies.ts';
import { listRunStuckEvents } from '../store/history/list-run-stuck-events.ts';
import { pageRunCompensations, pageRunEvents, pageRunSteps, type HistoryPage } from './page-run-history.ts';

/** How many rows of each kind the head of a run carries (ADR 0035). */
export interface RunHeadSizes {
  steps: number;
  compensations: number;
  events: number;
  anomalies: number;
  /** The run.stuck / run.unstuck events carried whatever their age (the newest this many). */
  stuckEvents: number;
}

/** A run's summary with the newest page of each part of its history, newest first. */
export interface RunHead {
  run: RunView;
  steps: HistoryPage<ActionView>;
  compensations: HistoryPage<CompensationView>;
  events: HistoryPage<FlowEventView>;
  anomalies: AnomalyView[];
  /**
   * The run's stuck episodes as events (run.stuck, run.unstuck), newest first, read apart from the
   * events page: a stuck history must not end where the newest page of events begins.
   */
  stuckEvents: FlowEventView[];
}

/**
 * What a run page opens with: the run and the newest page of its steps, compensations and events,
 * each saying whether older rows remain; never the whole history, so a run with 10,000 steps costs
 * what one with 50 does. Null when there is no such run.
 */
export async function readRunHead(
  db: Pick<Database, 'prisma'>,
  runId: string,
  sizes: RunHeadSizes,
): Promise<RunHead | null> {
  if (!isUuid(runId)) return null;
  const run = await findRun(db.prisma, runId);
  if (!run) return null;
  const [steps, compensations, events, anomalies, stuckEvents] = await Promise.all([
    pageRunSteps(db, runId, { limit: sizes.steps }),
    pageRunCompensations(db, runId, { limit: sizes.compensations }),
    pageRunEvents(db, runId, { limit: sizes.events }),
    listRunAnomalies(db.prisma, runId, sizes.anomalies),
    listRunStuckEvents(db.prisma, runId, sizes.stuckEvents),
  ]);
  return {
    run: toRunView(run),
    steps,
    compensations,
    events,
    anomalies: anomalies.map(toAnomalyView),
    stuckEvents: stuckEvents.map(toFlowEventView),
  };
}

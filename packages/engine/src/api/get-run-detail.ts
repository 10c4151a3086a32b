import type { PrismaClient } from '../generated/prisma/client.ts';
import { isUuid } from '../input/assert-uuid.ts';
import {
  toActionView,
  toAnomalyView,
  toCompensationView,
  toFlowEventView,
  toRunView,
  type RunDetail,
} from '../runtime/run-view.ts';
import { findRun } from '../store/find-run.ts';
import { listActionRuns } from '../store/list-action-runs.ts';
import { listCompensationRuns } from '../store/list-compensation-runs.ts';
import { listFlowEvents } from '../store/list-flow-events.ts';
import { listRunAnomalies } from '../store/history/list-run-anomalies.ts';

export async function getRunDetail(prisma: PrismaClient, runId: string): Promise<RunDetail | null> {
  // Not a uuid: no run can have that id (the column is a uuid), so there is none to return.
  if (!isUuid(runId)) return null;
  const run = await findRun(prisma, runId);
  if (!run) return null;
  const [actions, compensations, events, anomalies] = await Promise.all([
    listActionRuns(prisma, runId),
    listCompensationRuns(prisma, runId),
    listFlowEvents(prisma, runId),
    listRunAnomalies(prisma, runId, 200),
  ]);
  return {
    run: toRunView(run),
    actions: actions.map(toActionView),
    compensations: compensations.map(toCompensationView),
    events: events.map(toFlowEventView),
    anomalies: anomalies.map(toAnomalyView),
  };
}

import type { Database } from '../db/database.ts';
import { isUuid } from '../input/assert-uuid.ts';
import { toActionView, toAnomalyView, toCompensationView, toRunView } from '../runtime/run-view.ts';
import type { ActionView, AnomalyView, CompensationView, FlowEventView, RunView } from '../runtime/run-view.ts';
import { findRun } from '../store/find-run.ts';
import { countHistoryFrom } from '../store/history/count-history-from.ts';
import { findActionRunsBySequence } from '../store/history/find-action-runs-by-sequence.ts';
import { findCompensationRunsById } from '../store/history/find-compensation-runs-by-id.ts';
import { listRunAnomalies } from '../store/history/list-run-anomalies.ts';
import type { CompensationKey } from '../store/history/page-compensation-runs.ts';
import {
  pageRunCompensations,
  pageRunEvents,
  pageRunSteps,
  type HistoryPage,
  type HistoryReader,
} from './page-run-history.ts';

/** What a reader of an open run holds: the newest keys it has, the oldest, and the rows it holds open. */
export interface RunHeld {
  /** The newest step sequence held, and the oldest (for the gap check); none when it holds no step. */
  steps: { after?: number; from?: number; open: number[] };
  events: { after?: bigint; from?: bigint };
  compensations: { after?: CompensationKey; open: string[] };
  /** The newest anomaly id held. */
  anomalies: { after?: bigint };
  /** At most this many new rows of each kind per call; `more` says to ask again. */
  limit: number;
}

/** What changed in a run since a reader's last look (ADR 0035's polling rule). */
export interface RunChanges {
  run: RunView;
  /** Steps newer than `steps.after`, oldest first. */
  newSteps: HistoryPage<ActionView>;
  /** The current rows of the steps the reader holds open. */
  openSteps: ActionView[];
  newEvents: HistoryPage<FlowEventView>;
  newCompensations: HistoryPage<CompensationView>;
  openCompensations: CompensationView[];
  /** Anomalies newer than the newest held, oldest first (at most `limit`). */
  newAnomalies: AnomalyView[];
  /**
   * How many steps and events lie at or after the oldest held (null where it holds none): a reader
   * holding fewer missed a row that committed behind a newer one, and reads its window again.
   */
  heldFrom: { steps: number | null; events: number | null };
}

/**
 * The run's summary and only what is newer than what the reader holds, plus the rows it holds
 * open: every read is an index range from a key or a lookup by key, so a poll costs the same at
 * the run's 10th step as at its 10,000th. Null when the run does not exist.
 */
export async function readRunChanges(
  db: Pick<Database, 'prisma'>,
  runId: string,
  held: RunHeld,
): Promise<RunChanges | null> {
  if (!isUuid(runId)) return null;
  // One snapshot (REPEATABLE READ): the count and the rows agree, so a row recorded while the poll
  // reads is in both or in neither; only a row that committed behind a newer one makes them differ.
  return db.prisma.$transaction((tx) => readInSnapshot({ prisma: tx }, runId, held), {
    isolationLevel: 'RepeatableRead',
  });
}

async function readInSnapshot(db: HistoryReader, runId: string, held: RunHeld): Promise<RunChanges | null> {
  const run = await findRun(db.prisma, runId);
  if (!run) return null;
  const { limit } = held;
  // Sequential: statements of one transaction share its connection.
  const newSteps = await pageRunSteps(db, runId, { after: held.steps.after ?? -1, limit });
  const openSteps = await findActionRunsBySequence(db.prisma, runId, held.steps.open);
  const newEvents = await pageRunEvents(db, runId, { after: held.events.after ?? 0n, limit });
  const newCompensations = await pageRunCompensations(db, runId, {
    after: held.compensations.after ?? { level: -1, ordinal: -1 },
    limit,
  });
  const openCompensations = await findCompensationRunsById(db.prisma, runId, held.compensations.open);
  const newAnomalies = await listRunAnomalies(db.prisma, runId, limit, held.anomalies.after ?? 0n);
  const heldFrom = await countHistoryFrom(db.prisma, runId, { sequence: held.steps.from, eventId: held.events.from });
  return {
    run: toRunView(run),
    newSteps,
    openSteps: openSteps.map(toActionView),
    newEvents,
    newCompensations,
    openCompensations: openCompensations.map(toCompensationView),
    newAnomalies: newAnomalies.map(toAnomalyView),
    heldFrom,
  };
}

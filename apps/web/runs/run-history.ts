import type {
  CompensationRow,
  CompensationsPage,
  EventsPage,
  FlowEventRow,
  RunChanges,
  RunDetail,
  StepRow,
  StepsPage,
} from '@/trpc/api-types';

/**
 * What a run page holds of a run (ADR 0035): the run's head as `runs.get` gave it, grown by the
 * polls (what is newer) and by "Load older" (what is older). Steps, compensations and events stay
 * oldest first, each once, whatever order the pages came in.
 */
export type RunHistory = RunDetail;

/** Step and compensation statuses that can still change: a poll re-reads these rows. */
const openStepStatuses = new Set(['Pending', 'Running', 'Failed', 'Waiting']);

const bigintId = (id: string) => BigInt(id);
const compensationOrder = (a: CompensationRow, b: CompensationRow) =>
  a.rollbackLevel - b.rollbackLevel || a.ordinal - b.ordinal;

/** `rows` with `incoming` merged in by `key` (incoming wins: it is newer), sorted by `order`. */
function mergeRows<T>(
  rows: readonly T[],
  incoming: readonly T[],
  key: (r: T) => string,
  order: (a: T, b: T) => number,
) {
  const byKey = new Map(rows.map((r) => [key(r), r]));
  for (const r of incoming) byKey.set(key(r), r);
  return [...byKey.values()].sort(order);
}

const mergeSteps = (rows: readonly StepRow[], incoming: readonly StepRow[]) =>
  mergeRows(
    rows,
    incoming,
    (s) => String(s.sequence),
    (a, b) => a.sequence - b.sequence,
  );
const mergeEvents = (rows: readonly FlowEventRow[], incoming: readonly FlowEventRow[]) =>
  mergeRows(
    rows,
    incoming,
    (e) => e.id,
    (a, b) => (bigintId(a.id) < bigintId(b.id) ? -1 : 1),
  );
const mergeCompensations = (rows: readonly CompensationRow[], incoming: readonly CompensationRow[]) =>
  mergeRows(rows, incoming, (c) => c.id, compensationOrder);

/** The `runs.changes` input for what `h` holds: its newest keys, its oldest, and its open rows. */
export function heldInput(h: RunHistory) {
  const newestStep = h.actions.at(-1);
  const newestCompensation = h.compensations.at(-1);
  return {
    id: h.run.id,
    steps: {
      ...(newestStep ? { after: newestStep.sequence, from: h.actions[0]!.sequence } : {}),
      open: h.actions.filter((s) => openStepStatuses.has(s.status)).map((s) => s.sequence),
    },
    events: h.events.length > 0 ? { after: h.events.at(-1)!.id, from: h.events[0]!.id } : {},
    compensations: {
      ...(newestCompensation
        ? { after: { level: newestCompensation.rollbackLevel, ordinal: newestCompensation.ordinal } }
        : {}),
      open: h.compensations.filter((c) => openStepStatuses.has(c.status)).map((c) => c.id),
    },
    anomalies: h.anomalies.length > 0 ? { after: h.anomalies.at(-1)!.id } : {},
  };
}

/**
 * `h` with a poll's answer merged in. `missed` is true when the poll counted more steps or events
 * from the oldest held than `h` now holds: a row committed behind a newer one already seen, and
 * the page must read its head again (ADR 0035).
 */
export function mergeChanges(
  h: RunHistory,
  sent: ReturnType<typeof heldInput>,
  c: RunChanges,
): { history: RunHistory; missed: boolean; more: boolean } {
  const actions = mergeSteps(h.actions, [...c.newSteps.rows, ...c.openSteps]);
  const events = mergeEvents(h.events, c.newEvents.rows);
  const compensations = mergeCompensations(h.compensations, [...c.newCompensations.rows, ...c.openCompensations]);
  const anomalies = mergeRows(
    h.anomalies,
    c.newAnomalies,
    (a) => a.id,
    (a, b) => (bigintId(a.id) < bigintId(b.id) ? -1 : 1),
  );
  const stepsFrom = sent.steps.from;
  const eventsFrom = sent.events.from;
  const missed =
    (stepsFrom !== undefined && c.heldFrom.steps !== actions.filter((s) => s.sequence >= stepsFrom).length) ||
    (eventsFrom !== undefined &&
      c.heldFrom.events !== events.filter((e) => bigintId(e.id) >= bigintId(eventsFrom)).length);
  return {
    history: { ...h, run: c.run, actions, events, compensations, anomalies },
    missed,
    more: c.newSteps.more || c.newEvents.more || c.newCompensations.more,
  };
}

/** `h` with a page of older steps (newest first, as `runs.steps` reads back) added. */
export const withOlderSteps = (h: RunHistory, page: StepsPage): RunHistory => ({
  ...h,
  actions: mergeSteps(h.actions, page.rows),
  older: { ...h.older, steps: page.more },
});

export const withOlderEvents = (h: RunHistory, page: EventsPage): RunHistory => ({
  ...h,
  events: mergeEvents(h.events, page.rows),
  older: { ...h.older, events: page.more },
});

export const withOlderCompensations = (h: RunHistory, page: CompensationsPage): RunHistory => ({
  ...h,
  compensations: mergeCompensations(h.compensations, page.rows),
  older: { ...h.older, compensations: page.more },
});

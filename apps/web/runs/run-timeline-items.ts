type Step = {
  sequence: number;
  kind: string;
  name: string;
  status: string;
  attempts: number;
  maxAttempts: number;
  parallelBlock: number | null;
  startedAt: string | null;
  finishedAt: string | null;
  wakeAt: string | null;
};
type Compensation = {
  id: string;
  actionSequence: number;
  rollbackLevel: number;
  name: string;
  status: string;
  attempts: number;
};
type Event = { id: string; type: string; sequence: number | null; at: string; data: unknown };
type Anomaly = { id: string; code: string; message: string; sequence: number | null; at: string };

/** One step of the timeline with what happened to it: its events (attempt by attempt), anomalies, compensations. */
export interface TimelineStep<S extends Step = Step> {
  step: S;
  events: Event[];
  anomalies: Anomaly[];
  compensations: Compensation[];
}

/** The run's timeline: steps in order, parallel blocks grouped, and what belongs to the run itself. */
export interface RunTimeline<S extends Step = Step> {
  groups: { block: number | null; steps: TimelineStep<S>[] }[];
  /** Events and anomalies that name no step (run started, stuck, kicked, repairs…). */
  runEvents: Event[];
  runAnomalies: Anomaly[];
  /** Each stuck period: when and why it became stuck, and when (and by what) it stopped being stuck. */
  stuckPeriods: { reason: string; at: string; endedAt: string | null; endedBy: string | null }[];
}

/**
 * Places everything recorded for a run on its steps: each step's events and anomalies by sequence,
 * its compensations by the step they undo, consecutive steps of one parallel block in one group.
 * Recorded values (`ctx.now()` and friends) are left out: they have no attempts to show.
 */
export function runTimeline<S extends Step>(detail: {
  actions: S[];
  compensations: Compensation[];
  events: Event[];
  anomalies: Anomaly[];
  /** The run's run.stuck / run.unstuck events whatever their age (runs.get): the events held may be a page. */
  stuckEvents?: Event[];
}): RunTimeline<S> {
  const groups: RunTimeline<S>['groups'] = [];
  for (const step of detail.actions) {
    if (step.kind === 'value') continue;
    const item: TimelineStep<S> = {
      step,
      events: detail.events.filter((e) => e.sequence === step.sequence),
      anomalies: detail.anomalies.filter((a) => a.sequence === step.sequence),
      compensations: detail.compensations.filter((c) => c.actionSequence === step.sequence),
    };
    const last = groups[groups.length - 1];
    if (step.parallelBlock !== null && last && last.block === step.parallelBlock) last.steps.push(item);
    else groups.push({ block: step.parallelBlock, steps: [item] });
  }
  const stuckPeriods: RunTimeline['stuckPeriods'] = [];
  for (const e of stuckStory(detail.stuckEvents ?? [], detail.events)) {
    const data = (e.data ?? {}) as { reason?: unknown; by?: unknown };
    if (e.type === 'run.stuck')
      stuckPeriods.push({
        reason: typeof data.reason === 'string' ? data.reason : '',
        at: e.at,
        endedAt: null,
        endedBy: null,
      });
    const open = stuckPeriods[stuckPeriods.length - 1];
    if (e.type === 'run.unstuck' && open && open.endedAt === null) {
      open.endedAt = e.at;
      open.endedBy = typeof data.by === 'string' ? data.by : null;
    }
  }
  return {
    groups,
    runEvents: detail.events.filter((e) => e.sequence === null),
    runAnomalies: detail.anomalies.filter((a) => a.sequence === null),
    stuckPeriods,
  };
}

const stuckTypes = new Set(['run.stuck', 'run.unstuck']);

/**
 * The run's stuck and unstuck events, each once, oldest first: those the page opened with (every
 * episode, however old) and those held among its events (a poll brings a new episode there).
 */
function stuckStory(stuckEvents: readonly Event[], events: readonly Event[]): Event[] {
  const byId = new Map(stuckEvents.map((e) => [e.id, e]));
  for (const e of events) if (stuckTypes.has(e.type)) byId.set(e.id, e);
  return [...byId.values()].sort((a, b) => (BigInt(a.id) < BigInt(b.id) ? -1 : 1));
}

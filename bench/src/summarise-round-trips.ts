import { percentile } from './percentile.ts';

/** The engine's hot statements by what they do; `other` is everything else the driver sent (job claims, polls). */
export type StatementKind = 'start' | 'transition' | 'finish' | 'other';

/** One statement as the traced driver saw it (performance.now() times, ms). */
export interface StatementTrace {
  readonly kind: StatementKind;
  /** The runs it carries (one item each). */
  readonly runIds: readonly string[];
  /** When the engine handed it to the driver. */
  readonly sentAt: number;
  /** When the pool handed it a connection; null if it never got one. */
  connectedAt: number | null;
  /** When its answer was back; null if it failed. */
  doneAt: number | null;
  /** The round it went in with statements of other kinds, one transaction and one round trip (ADR 0066). */
  readonly round?: number;
}

/** One flow as the bench saw it: its start called, each action's body, its `run.finished` event. */
export interface RunTrace {
  readonly runId: string;
  readonly startCalledAt: number;
  /** One per step, in step order. */
  readonly actions: readonly { readonly inAt: number; readonly outAt: number }[];
  readonly finishedAt: number;
}

/** Where one statement's share of a flow's wall time went, ms; the six add up to it exactly. */
export interface Segments {
  /** Ready (start called, or the previous action returned) while a statement of its kind was out. */
  readonly queuedMs: number;
  /** The rest of ready → sent: the engine's code, and its turn on the event loop, before the send. */
  readonly nodeBeforeSendMs: number;
  /** Sent → a pooled connection in hand. */
  readonly poolWaitMs: number;
  /** Connection → answer back: the wire, the server's execution and its commit (WAL flush). */
  readonly wireMs: number;
  /** Answer → the next action called (the replay), or → `run.finished` after the finish. */
  readonly nodeAfterReplyMs: number;
  /** The no-op action's body that follows (none after the finish). */
  readonly actionMs: number;
}

export interface KindSummary {
  readonly kind: Exclude<StatementKind, 'other'>;
  /** Statements of this kind sent in the window, and per regular flow. */
  readonly statements: number;
  readonly perFlow: number;
  /** Runs one statement carried: mean and most. */
  readonly itemsPerStatement: number;
  readonly maxItems: number;
  /** Statements of this kind out at once, on average over the window (sent → answer). */
  readonly meanInFlight: number;
  /** Mean per (flow, statement of this kind). */
  readonly segments: Segments;
  readonly wireP50Ms: number;
  readonly wireP99Ms: number;
}

export interface RoundTripSummary {
  /** Flows whose trace has the hot path's shape (start, a transition per further step, finish), and the others. */
  readonly flows: number;
  readonly irregular: number;
  /** Mean start-called → run.finished of the regular flows, and its split (sums of {@link Segments} per flow). */
  readonly wallMsPerFlow: number;
  readonly perFlow: Segments;
  readonly kinds: KindSummary[];
  /** Statements of kind `other` per regular flow (the pool's job claims, heartbeats...). */
  readonly otherPerFlow: number;
  /**
   * Round trips (so commits) of the hot statements per regular flow: a round of several kinds (ADR
   * 0066) counts once, every other hot statement once.
   */
  readonly hotRoundTripsPerFlow: number;
}

const segmentNames = [
  'queuedMs',
  'nodeBeforeSendMs',
  'poolWaitMs',
  'wireMs',
  'nodeAfterReplyMs',
  'actionMs',
] as const satisfies readonly (keyof Segments)[];
const hotKinds = ['start', 'transition', 'finish'] as const;

/**
 * Splits each flow's wall time, statement by statement, into {@link Segments}, from the driver's and
 * the action's timestamps alone. "Queued" is the part of ready → sent during which another statement
 * of the same kind was out: with one in flight per kind (ADR 0045), the time a run waited for the
 * batcher's slot, not for the engine's code. A flow whose statements are not the hot path's shape (a
 * retry, a fallback transaction) is counted apart and left out of the means.
 */
export function summariseRoundTrips(
  runs: readonly RunTrace[],
  statements: readonly StatementTrace[],
): RoundTripSummary {
  const byRun = new Map<string, StatementTrace[]>();
  for (const s of statements)
    for (const id of s.runIds) {
      const list = byRun.get(id);
      if (list) list.push(s);
      else byRun.set(id, [s]);
    }
  const busy = new Map(hotKinds.map((k) => [k, mergeIntervals(statements.filter((s) => s.kind === k))]));
  const perKind = new Map(hotKinds.map((k) => [k, [] as Segments[]]));
  const perFlow: Segments[] = [];
  let irregular = 0;
  for (const run of runs) {
    const own = (byRun.get(run.runId) ?? []).sort((a, b) => a.sentAt - b.sentAt);
    const expected = ['start', ...run.actions.slice(1).map(() => 'transition'), 'finish'];
    if (own.length !== expected.length || own.some((s, i) => s.kind !== expected[i] || !answered(s))) {
      irregular += 1;
      continue;
    }
    const flow = own.map((s, i) => {
      const readyAt = i === 0 ? run.startCalledAt : run.actions[i - 1]!.outAt;
      const action = run.actions[i];
      const segments = splitStatement(
        s as Answered,
        readyAt,
        action?.inAt ?? run.finishedAt,
        action,
        busy.get(s.kind as Hot)!,
      );
      perKind.get(s.kind as Hot)!.push(segments);
      return segments;
    });
    perFlow.push(addSegments(flow));
  }
  const flows = perFlow.length;
  return {
    flows,
    irregular,
    wallMsPerFlow: mean(perFlow.map(total)),
    perFlow: meanSegments(perFlow),
    kinds: hotKinds.map((kind) => summariseKind(kind, statements, perKind.get(kind)!, flows)),
    otherPerFlow: statements.filter((s) => s.kind === 'other').length / Math.max(1, flows),
    hotRoundTripsPerFlow: hotRoundTrips(statements) / Math.max(1, flows),
  };
}

type Hot = (typeof hotKinds)[number];

/** The hot statements' round trips: each round once, each statement sent alone once. */
function hotRoundTrips(statements: readonly StatementTrace[]): number {
  const rounds = new Set<number>();
  let alone = 0;
  for (const s of statements) {
    if (s.kind === 'other') continue;
    if (s.round === undefined) alone += 1;
    else rounds.add(s.round);
  }
  return alone + rounds.size;
}
type Answered = StatementTrace & { connectedAt: number; doneAt: number };
type Interval = readonly [number, number];

const answered = (s: StatementTrace): s is Answered => s.connectedAt !== null && s.doneAt !== null;

function splitStatement(
  s: Answered,
  readyAt: number,
  nextAt: number,
  action: { inAt: number; outAt: number } | undefined,
  busy: readonly Interval[],
): Segments {
  const queuedMs = overlap(busy, readyAt, s.sentAt);
  return {
    queuedMs,
    nodeBeforeSendMs: s.sentAt - readyAt - queuedMs,
    poolWaitMs: s.connectedAt - s.sentAt,
    wireMs: s.doneAt - s.connectedAt,
    nodeAfterReplyMs: nextAt - s.doneAt,
    actionMs: action ? action.outAt - action.inAt : 0,
  };
}

function summariseKind(
  kind: Hot,
  statements: readonly StatementTrace[],
  segments: readonly Segments[],
  flows: number,
): KindSummary {
  const own = statements.filter((s) => s.kind === kind);
  const done = own.filter(answered);
  const span = done.length === 0 ? 0 : Math.max(...done.map((s) => s.doneAt)) - Math.min(...done.map((s) => s.sentAt));
  const wire = segments.map((s) => s.wireMs);
  return {
    kind,
    statements: own.length,
    perFlow: own.length / Math.max(1, flows),
    itemsPerStatement: mean(own.map((s) => s.runIds.length)),
    maxItems: own.reduce((most, s) => Math.max(most, s.runIds.length), 0),
    meanInFlight: span > 0 ? done.reduce((sum, s) => sum + (s.doneAt - s.sentAt), 0) / span : 0,
    segments: meanSegments(segments),
    wireP50Ms: percentile(wire, 50),
    wireP99Ms: percentile(wire, 99),
  };
}

/** The union of the statements' sent → answered intervals, as disjoint intervals in time order. */
export function mergeIntervals(statements: readonly StatementTrace[]): Interval[] {
  const sorted = statements
    .filter((s): s is StatementTrace & { doneAt: number } => s.doneAt !== null)
    .map((s): Interval => [s.sentAt, s.doneAt])
    .sort((a, b) => a[0] - b[0]);
  const merged: [number, number][] = [];
  for (const [from, to] of sorted) {
    const last = merged.at(-1);
    if (last && from <= last[1]) last[1] = Math.max(last[1], to);
    else merged.push([from, to]);
  }
  return merged;
}

/** How much of [from, to] the disjoint, ordered `intervals` cover. */
export function overlap(intervals: readonly Interval[], from: number, to: number): number {
  let lo = 0;
  let hi = intervals.length;
  while (lo < hi) {
    const mid = (lo + hi) >> 1;
    if (intervals[mid]![1] <= from) lo = mid + 1;
    else hi = mid;
  }
  let covered = 0;
  for (let i = lo; i < intervals.length && intervals[i]![0] < to; i++)
    covered += Math.min(to, intervals[i]![1]) - Math.max(from, intervals[i]![0]);
  return covered;
}

const mean = (values: readonly number[]) =>
  values.length === 0 ? Number.NaN : values.reduce((a, b) => a + b, 0) / values.length;
const total = (s: Segments) => segmentNames.reduce((sum, name) => sum + s[name], 0);

function addSegments(list: readonly Segments[]): Segments {
  return Object.fromEntries(
    segmentNames.map((name) => [name, list.reduce((sum, s) => sum + s[name], 0)]),
  ) as unknown as Segments;
}

function meanSegments(list: readonly Segments[]): Segments {
  return Object.fromEntries(segmentNames.map((name) => [name, mean(list.map((s) => s[name]))])) as unknown as Segments;
}

import { stepsPerFlow } from './bench-flow.ts';
import { fixed, markdownTable } from './markdown-table.ts';
import type { Ceiling } from './run-pgbench-ceiling.ts';
import type { ModeSummary, Spread, SystemSummary } from './summarise-peer-comparison.ts';

/** One of issue 11's targets as this run measured it. */
export interface TargetVerdict {
  readonly target: string;
  /** The figure the target is judged on, as printed. */
  readonly measured: string;
  /** null when the run could not read the figure (a phase missing, pg_stat_statements absent). */
  readonly met: boolean | null;
  /** How far from the target, as printed: empty when met or unknown. */
  readonly shortBy: string;
}

type Bound = 'atLeast' | 'atMost';

/**
 * Judges `value` against `limit`: met, or the factor the figure must move by (×) to reach it. A ratio
 * target reads best as a factor ("needs 1.33× more"), so that is how a shortfall is said.
 */
function judge(target: string, value: number | null | undefined, bound: Bound, limit: number, digits: number) {
  if (value === null || value === undefined || !Number.isFinite(value)) {
    return { target, measured: '–', met: null, shortBy: '' };
  }
  // Judged on the figure as printed, so a row never says "4.00 … no" against a limit of 4.
  const shown = Number(value.toFixed(digits));
  const met = bound === 'atLeast' ? shown >= limit : shown <= limit;
  const factor = bound === 'atLeast' ? limit / value : value / limit;
  const shortBy = met ? '' : `${bound === 'atLeast' ? 'needs' : 'must fall'} ${fixed(factor, 2)}×`;
  return { target, measured: fixed(value, digits), met, shortBy };
}

const at = (systems: readonly SystemSummary[], system: SystemSummary['system'], c: number) =>
  systems.find((s) => s.system === system && s.concurrency === c);

/** Sagaflow's median ÷ DBOS's median of one per-flow figure at concurrency `c`. */
function ratioOfMedians(summary: ModeSummary, c: number, pick: (s: SystemSummary) => Spread | null) {
  const ours = at(summary.systems, 'Sagaflow', c);
  const theirs = at(summary.systems, 'DBOS', c);
  const a = ours ? pick(ours)?.median : undefined;
  const b = theirs ? pick(theirs)?.median : undefined;
  return a === undefined || b === undefined || b === 0 ? null : a / b;
}

/**
 * Issue 11's targets against one mode's summary (the durable mode is the one the issue states them
 * for): flows/s ≥ 3× DBOS at every concurrency above 1 and ≥ 1× at the lowest, p50 at the lowest ≤
 * DBOS's and p99 ≤ 2× DBOS's (medians of the per-round ratios), ≤ 8 statements and ≤ 4 writing
 * transactions per flow, Node CPU per flow ≤ 1/3 of DBOS's and PostgreSQL CPU per flow ≤ DBOS's
 * (ratio of the medians at each concurrency), R ≥ 0.30 at each concurrency.
 */
export function judgePeerTargets(summary: ModeSummary): TargetVerdict[] {
  const cs = summary.concurrencies;
  const lowest = cs[0];
  if (lowest === undefined) return [];
  const ratio = (c: number) => summary.ratios.find((r) => r.concurrency === c);
  const ours = (c: number) => at(summary.systems, 'Sagaflow', c);
  return [
    ...cs.map((c) =>
      judge(
        `flows/s ≥ ${c === lowest ? 1 : 3}× DBOS at c=${c}`,
        ratio(c)?.flowsPerSecond?.median,
        'atLeast',
        c === lowest ? 1 : 3,
        2,
      ),
    ),
    judge(`p50 ≤ DBOS's at c=${lowest} (ratio)`, ratio(lowest)?.latencyP50?.median, 'atMost', 1, 2),
    judge(`p99 ≤ 2× DBOS's at c=${lowest} (ratio)`, ratio(lowest)?.latencyP99?.median, 'atMost', 2, 2),
    ...cs.map((c) => judge(`statements / flow ≤ 8 at c=${c}`, ours(c)?.statementsPerFlow?.median, 'atMost', 8, 1)),
    ...cs.map((c) =>
      judge(`writing tx / flow ≤ 4 at c=${c}`, ours(c)?.writeTransactionsPerFlow?.median, 'atMost', 4, 2),
    ),
    ...cs.map((c) =>
      judge(
        `Node CPU / flow ≤ 1/3 of DBOS's at c=${c} (ratio)`,
        ratioOfMedians(summary, c, (s) => s.nodeCpuMsPerFlow),
        'atMost',
        1 / 3,
        2,
      ),
    ),
    ...cs.map((c) =>
      judge(
        `PostgreSQL CPU / flow ≤ DBOS's at c=${c} (ratio)`,
        ratioOfMedians(summary, c, (s) => s.postgresCpuMsPerFlow),
        'atMost',
        1,
        2,
      ),
    ),
    ...cs.map((c) => judge(`R ≥ 0.30 at c=${c}`, ours(c)?.r?.median, 'atLeast', 0.3, 3)),
  ];
}

/**
 * The most R one client could reach if each of a flow's commits, which it waits for one after
 * another, cost no more than one pgbench transaction at one client: (1-client tps ÷ commits per flow)
 * flows/s, × steps per flow ÷ the 4-client tps. Below 0.30 the R target at c=1 cannot be met by
 * any engine that commits that often per flow on this server, however cheap its statements.
 */
export function rBoundAtOneClient(summary: ModeSummary, ceilings: readonly Ceiling[]): number | null {
  const one = ceilings.find((c) => c.clients === 1)?.tps;
  const four = ceilings.find((c) => c.clients === 4)?.tps;
  const commits = at(summary.systems, 'Sagaflow', 1)?.commitsPerFlow?.median;
  if (!one || !four || !commits) return null;
  return ((one / commits) * stepsPerFlow) / four;
}

/** R's target, as a flow time at one client: one flow every this many ms reaches R = 0.30. */
const targetR = 0.3;

/**
 * Where one client's flow time goes, per system (medians over rounds): the WAL flushes its commits wait
 * for (pg_stat_wal), PostgreSQL's CPU, the executor's wall time (pg_stat_statements), Node's CPU. Then
 * what R ≥ 0.30 at c=1 leaves for the CPU once the flushes are paid: what the profile says is next.
 * Empty when the run has no c=1 phase or no 4-client ceiling.
 */
export function renderOneClientTime(summary: ModeSummary, ceilings: readonly Ceiling[]): string {
  const four = ceilings.find((c) => c.clients === 4)?.tps;
  const systems = (['Sagaflow', 'DBOS', 'Floor'] as const).flatMap((name) => at(summary.systems, name, 1) ?? []);
  const ours = systems.find((s) => s.system === 'Sagaflow');
  if (!four || !ours?.flowsPerSecond) return '';
  const ms = (v: number | null | undefined, digits = 2) => (v === null || v === undefined ? '–' : fixed(v, digits));
  const flushMs = (s: SystemSummary) =>
    s.walSyncsPerFlow && s.walSyncMs ? s.walSyncsPerFlow.median * s.walSyncMs.median : null;
  const rows: [string, (s: SystemSummary) => string][] = [
    ['time per flow (1 ÷ flows/s), ms', (s) => ms(s.flowsPerSecond ? 1000 / s.flowsPerSecond.median : null)],
    ['WAL flushes / flow', (s) => ms(s.walSyncsPerFlow?.median)],
    ['ms per flush', (s) => ms(s.walSyncMs?.median, 3)],
    ['flushes × ms per flush, ms', (s) => ms(flushMs(s))],
    ['PostgreSQL CPU / flow, ms', (s) => ms(s.postgresCpuMsPerFlow?.median)],
    ['in the executor (pg_stat_statements, wall time), ms', (s) => ms(s.executorMsPerFlow?.median)],
    ['Node CPU / flow, ms', (s) => ms(s.nodeCpuMsPerFlow?.median)],
  ];
  const table = markdownTable(
    [
      "c=1, where a flow's time goes (medians)",
      ...systems.map((s) => (s.system === 'Floor' ? 'floor (ADR 0090)' : s.system)),
    ],
    rows.map(([label, pick]) => [label, ...systems.map(pick)]),
  );
  const budget = (1000 * stepsPerFlow) / (targetR * four);
  const flushes = flushMs(ours);
  const cpu = (ours.postgresCpuMsPerFlow?.median ?? Number.NaN) + ours.nodeCpuMsPerFlow!.median;
  const floor = floorNote(systems);
  if (flushes === null) return floor ? `${table}\n\n${floor}` : table;
  const left = budget - flushes;
  const cap = ((1000 / flushes) * stepsPerFlow) / four;
  return (
    `${table}\n\nR ≥ ${fixed(targetR, 2)} at c=1 needs a flow every ${fixed(budget, 2)} ms. Sagaflow's WAL flushes alone ` +
    `take ${fixed(flushes, 2)} ms of a flow (about one per commit, and one client waits for its commits one after ` +
    `another: ADR 0073), which ${left > 0 ? `leaves ${fixed(left, 2)} ms` : 'leaves nothing'} ` +
    `for the CPU of its statements and steps; they take ${Number.isFinite(cpu) ? fixed(cpu, 2) : '–'} ms now ` +
    `(PostgreSQL and Node; PostgreSQL's includes part of the flushes). With no CPU at all the flushes would cap R at c=1 at ` +
    `${fixed(cap, 3)}.` +
    (floor ? `\n\n${floor}` : '')
  );
}

/**
 * What the floor (four autocommitted statements per flow through the same driver, ADR 0090) says of
 * Node CPU at c=1: the part of Sagaflow's that any client committing as often pays, against the
 * target of a third of DBOS's. Empty without the three figures.
 */
function floorNote(systems: readonly SystemSummary[]): string {
  const node = (name: SystemSummary['system']) => systems.find((s) => s.system === name)?.nodeCpuMsPerFlow?.median;
  const [ours, theirs, floor] = [node('Sagaflow'), node('DBOS'), node('Floor')];
  if (ours === undefined || theirs === undefined || floor === undefined) return '';
  const target = theirs / 3;
  return (
    `Node CPU at c=1: the floor, four autocommitted statements per flow through the same driver and pool kind with ` +
    `no engine at all, took ${fixed(floor, 2)} ms per flow, ${fixed(floor / theirs, 2)} of DBOS's ${fixed(theirs, 2)} ms. ` +
    `Sagaflow took ${fixed(ours, 2)} ms, ${fixed(ours - floor, 2)} ms above the floor. The target, a third of ` +
    `DBOS's, is ${fixed(target, 2)} ms: ${target > floor ? `${fixed(target - floor, 2)} ms above the floor for the engine's own work` : `below the floor, so no engine that commits four times per flow through this driver meets it on this machine`}.`
  );
}

/** The flows/s ratio to DBOS the targets ask for above the lowest concurrency. */
const targetRatio = 3;

/**
 * For each concurrency above the lowest where Sagaflow's flows/s is short of 3× DBOS's (medians): the
 * cores each system kept busy (flows/s × Node and PostgreSQL CPU per flow, medians over rounds), and
 * the two ways to the target, since flows/s is cores busy ÷ CPU per flow: the cores the target would
 * take at today's CPU per flow, and the CPU per flow it would take on the cores kept busy today.
 * Empty when every such target is met or a figure is missing.
 */
export function renderManyClientCores(summary: ModeSummary): string {
  const lines = summary.concurrencies.slice(1).flatMap((c) => {
    const ours = at(summary.systems, 'Sagaflow', c);
    const theirs = at(summary.systems, 'DBOS', c);
    const ratio = summary.ratios.find((r) => r.concurrency === c)?.flowsPerSecond?.median;
    const busy = ours?.coresBusy?.median;
    const flows = ours?.flowsPerSecond?.median;
    const target = theirs?.flowsPerSecond ? targetRatio * theirs.flowsPerSecond.median : undefined;
    if (ratio === undefined || ratio >= targetRatio || !busy || !flows || target === undefined) return [];
    const cpu = (busy * 1000) / flows;
    return [
      `At c=${c} Sagaflow kept ${fixed(busy, 2)} cores busy for ${fixed(flows, 0)} flows/s (${fixed(cpu, 2)} ms of ` +
        `CPU per flow, Node and PostgreSQL), DBOS ${fixed(theirs?.coresBusy?.median, 2)}. ${targetRatio}× DBOS is ` +
        `${fixed(target, 0)} flows/s: at this CPU per flow that takes ${fixed((target * cpu) / 1000, 2)} cores busy, ` +
        `and on ${fixed(busy, 2)} cores it takes ${fixed((busy * 1000) / target, 2)} ms of CPU per flow.`,
    ];
  });
  return lines.join('\n\n');
}

/** The targets table, then one line on R's bound at one client when the run measured c=1. */
export function renderPeerTargets(summary: ModeSummary, ceilings: readonly Ceiling[]): string {
  const verdicts = judgePeerTargets(summary);
  const table = markdownTable(
    ["Issue 11's target (this mode)", 'measured (median)', 'met', 'short by'],
    verdicts.map((v) => [v.target, v.measured, v.met === null ? '–' : v.met ? 'yes' : 'no', v.shortBy]),
  );
  const bound = rBoundAtOneClient(summary, ceilings);
  const commits = at(summary.systems, 'Sagaflow', 1)?.commitsPerFlow?.median;
  const reached = at(summary.systems, 'Sagaflow', 1)?.r?.median;
  const note =
    bound === null
      ? ''
      : `\n\nAt c=1 a flow waits for its ${fixed(commits, 2)} commits one after another (ADR 0073: ` +
        "the start with step 1's claim, each step's outcome with the next claim, the last with the finish). Were each " +
        `as cheap as one 1-client pgbench transaction (its client and round trip included), c=1 would reach R = ${fixed(bound, 3)}` +
        (reached === undefined ? '.' : `, of which this run reached ${fixed((reached / bound) * 100, 0)} %.`);
  const sections = [renderOneClientTime(summary, ceilings), renderManyClientCores(summary)].filter((t) => t !== '');
  return [`${table}${note}`, ...sections].join('\n\n');
}

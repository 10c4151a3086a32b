import { fixed, markdownTable } from './markdown-table.ts';
import type { CoresBusy } from './read-cpu-times.ts';
import type { ServerRoundTripStats } from './read-server-round-trip-stats.ts';
import type { WaitEventSamples } from './sample-wait-events.ts';
import type { RoundTripSummary, Segments } from './summarise-round-trips.ts';

/** What `bench:round-trips` measured in one window. */
export interface RoundTripReport {
  readonly concurrency: number;
  readonly seconds: number;
  readonly flowsPerSecond: number;
  readonly latencyP50Ms: number;
  readonly latencyP99Ms: number;
  readonly cores: CoresBusy;
  /** Node's event loop: the share of the window it was running code, and how late its timers fired. */
  readonly eventLoop: { readonly utilisation: number; readonly delayP50Ms: number; readonly delayP99Ms: number };
  readonly transactionsPerFlow: number;
  readonly summary: RoundTripSummary;
  readonly server: ServerRoundTripStats;
  readonly waits: WaitEventSamples;
}

const segmentLabels: [keyof Segments, string][] = [
  ['queuedMs', 'queued behind the in-flight statement of its kind'],
  ['nodeBeforeSendMs', 'Node: ready → statement sent (engine code, event-loop turn)'],
  ['poolWaitMs', 'waiting for a pooled connection'],
  ['wireMs', 'wire + server (execution, commit, WAL flush)'],
  ['nodeAfterReplyMs', 'Node: answer → next action called (replay) / → run.finished'],
  ['actionMs', 'the no-op actions'],
];

/** The report as markdown: headline, per-flow split, per-kind split, and the wire time split with the server's figures. */
export function renderRoundTrips(r: RoundTripReport): string {
  const s = r.summary;
  const wal = r.server.wal;
  const flushMs = wal.syncs > 0 ? (wal.syncMs + wal.writeMs) / wal.syncs : Number.NaN;
  const writing = s.kinds.reduce((sum, k) => sum + k.statements, 0);
  const headline =
    `c=${r.concurrency}, durable commits, ${r.seconds} s: ${fixed(r.flowsPerSecond, 0)} flows/s, ` +
    `p50 ${fixed(r.latencyP50Ms, 1)} ms, p99 ${fixed(r.latencyP99Ms, 1)} ms; ` +
    `cores busy: Node ${fixed(r.cores.node, 2)}, PostgreSQL ${fixed(r.cores.postgres, 2)}, rest of the machine ${fixed(r.cores.other, 2)}; ` +
    `Node's event loop busy ${fixed(100 * r.eventLoop.utilisation, 0)} % of the window, timer delay p50 ${fixed(r.eventLoop.delayP50Ms, 2)} / p99 ${fixed(r.eventLoop.delayP99Ms, 2)} ms; ` +
    `${s.flows} flows traced (${s.irregular} of another shape left out), ${fixed(s.otherPerFlow, 3)} other statements and ${fixed(r.transactionsPerFlow, 3)} transactions per flow; ` +
    `hot round trips (commits) per flow ${fixed(s.hotRoundTripsPerFlow, 3)}.`;
  const perFlow = markdownTable(
    ['where a flow’s wall time goes', 'ms / flow', 'share'],
    [
      ...segmentLabels.map(([key, label]) => [
        label,
        fixed(s.perFlow[key], 3),
        `${fixed((100 * s.perFlow[key]) / s.wallMsPerFlow, 1)} %`,
      ]),
      ['**start called → run.finished**', fixed(s.wallMsPerFlow, 3), '100 %'],
    ],
  );
  const perKind = markdownTable(
    [
      'statement',
      'per flow',
      'runs / statement (most)',
      'in flight (mean)',
      ...segmentLabels.slice(0, 5).map(([key]) => key.replace(/Ms$/, ' ms')),
    ],
    s.kinds.map((k) => [
      k.kind,
      fixed(k.perFlow, 2),
      `${fixed(k.itemsPerStatement, 2)} (${k.maxItems})`,
      fixed(k.meanInFlight, 2),
      ...segmentLabels.slice(0, 5).map(([key]) => fixed(k.segments[key], 3)),
    ]),
  );
  const wire = markdownTable(
    [
      'statement',
      'wire + server mean (p50 / p99)',
      'server exec',
      'server plan (plans / call)',
      'WAL write + flush',
      'rest',
    ],
    s.kinds.map((k) => {
      const cost = r.server.statements[k.kind];
      const rest = cost ? k.segments.wireMs - cost.execMs - cost.planMs - flushMs : Number.NaN;
      return [
        k.kind,
        `${fixed(k.segments.wireMs, 3)} (${fixed(k.wireP50Ms, 2)} / ${fixed(k.wireP99Ms, 2)})`,
        fixed(cost?.execMs, 3),
        `${fixed(cost?.planMs, 3)} (${fixed(cost?.plansPerCall, 2)})`,
        fixed(flushMs, 3),
        fixed(rest, 3),
      ];
    }),
  );
  const walLine =
    `WAL over the window: ${wal.syncs} flushes (${fixed(wal.syncs / Math.max(1, writing), 2)} per hot statement, ` +
    `${fixed(wal.syncs / r.seconds, 0)} / s), a flush ${fixed(wal.syncs > 0 ? wal.syncMs / wal.syncs : Number.NaN, 3)} ms ` +
    `(+ ${fixed(wal.syncs > 0 ? wal.writeMs / wal.syncs : Number.NaN, 3)} ms of write), ${fixed(wal.records / Math.max(1, s.flows), 1)} records per flow. ` +
    `"rest" = the client's wire + server time less execution, planning and one write + flush: the network and ` +
    `protocol, a commit waiting for a flush already under way, lock waits, and an answer waiting for Node's event loop.`;
  const w = r.waits;
  const waitLine =
    `Server backends sampled ${w.samples} times: ${fixed(w.active / Math.max(1, w.samples), 2)} active on average; of their samples, ` +
    Object.entries(w.byEvent)
      .sort((a, b) => b[1] - a[1])
      .map(([event, n]) => `${event} ${fixed((100 * n) / Math.max(1, w.active), 1)} %`)
      .join(', ') +
    ` ("CPU": running or waiting for a core, which the server cannot tell apart).`;
  return [headline, '', perFlow, '', perKind, '', wire, '', walLine, '', waitLine].join('\n');
}

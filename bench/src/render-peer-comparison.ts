import { renderPeerTargets } from './judge-peer-targets.ts';
import { fixed, markdownTable } from './markdown-table.ts';
import type { Ceiling } from './run-pgbench-ceiling.ts';
import type { ModeSummary, Spread, SystemSummary } from './summarise-peer-comparison.ts';

export interface PeerModeReport {
  readonly summary: ModeSummary;
  /** The server's settings as read in this mode (proves fsync and synchronous_commit). */
  readonly server: string;
  readonly ceilings: readonly Ceiling[];
}

const modeTitle = {
  durable: 'durable commits (fsync on, synchronous_commit on) — the headline',
  'fsync-off': 'fsync off (secondary: commits cost no disk flush)',
} as const;

/** The per-flow counts read from the server's statistics, in the order every table shows them. */
const countHeaders = ['statements / flow', 'commits / flow', 'writing tx / flow'];

/** `median` alone, or `median (min–max)` when the rounds disagree. */
function withSpread(s: Spread | null, digits: number, unit = ''): string {
  if (s === null) return '–';
  const m = `${fixed(s.median, digits)}${unit}`;
  return s.n > 1 ? `${m} (${fixed(s.min, digits)}–${fixed(s.max, digits)})` : m;
}

/** The range of one per-flow figure's medians across concurrencies, e.g. `1.5–1.6 ms`. */
function acrossConcurrencies(
  rows: readonly SystemSummary[],
  pick: (s: SystemSummary) => Spread | null,
  digits: number,
  unit = '',
): string {
  const medians = rows
    .map(pick)
    .filter((s): s is Spread => s !== null)
    .map((s) => s.median);
  if (medians.length === 0) return '–';
  const lo = fixed(Math.min(...medians), digits);
  const hi = fixed(Math.max(...medians), digits);
  return lo === hi ? `${lo}${unit}` : `${lo}–${hi}${unit}`;
}

/** The headline: one row per system, Sagaflow's with its ratio to DBOS (median of the per-round ratios). */
function renderHeadline({ summary }: PeerModeReport): string {
  const cs = summary.concurrencies;
  const ratioOf = (c: number) => summary.ratios.find((r) => r.concurrency === c);
  const rows = (['DBOS', 'Sagaflow'] as const).map((system) => {
    const mine = summary.systems.filter((s) => s.system === system);
    const at = (c: number) => mine.find((s) => s.concurrency === c);
    const ratio = (c: number, pick: 'flowsPerSecond' | 'latencyP50') => {
      const r = ratioOf(c)?.[pick];
      return system === 'Sagaflow' && r ? ` (${fixed(r.median, 2)}×)` : '';
    };
    const first = cs[0] ?? 1;
    return [
      system === 'DBOS' ? 'DBOS Transact 5.3' : 'Sagaflow',
      ...cs.map((c) => `${fixed(at(c)?.flowsPerSecond?.median, 0)}${ratio(c, 'flowsPerSecond')}`),
      `${fixed(at(first)?.latencyP50Ms?.median, 1)} ms${ratio(first, 'latencyP50')}`,
      `${fixed(at(first)?.latencyP99Ms?.median, 1)} ms`,
      acrossConcurrencies(mine, (s) => s.statementsPerFlow, 1),
      acrossConcurrencies(mine, (s) => s.commitsPerFlow, 1),
      acrossConcurrencies(mine, (s) => s.writeTransactionsPerFlow, 1),
      acrossConcurrencies(mine, (s) => s.nodeCpuMsPerFlow, 2, ' ms'),
      acrossConcurrencies(mine, (s) => s.postgresCpuMsPerFlow, 2, ' ms'),
    ];
  });
  const first = cs[0] ?? 1;
  return markdownTable(
    [
      '',
      ...cs.map((c, i) => (i === 0 ? `c=${c} flows/s` : `c=${c}`)),
      `p50 at c=${first}`,
      `p99 at c=${first}`,
      ...countHeaders,
      'Node CPU / flow',
      'PostgreSQL CPU / flow',
    ],
    rows,
  );
}

function renderDetail({ summary }: PeerModeReport): string {
  const rows = summary.systems.map((s) => [
    `${s.system} c=${s.concurrency}`,
    withSpread(s.flowsPerSecond, 0),
    withSpread(s.latencyP50Ms, 1),
    withSpread(s.latencyP99Ms, 1),
    withSpread(s.statementsPerFlow, 1),
    withSpread(s.commitsPerFlow, 2),
    withSpread(s.writeTransactionsPerFlow, 2),
    withSpread(s.nodeCpuMsPerFlow, 2),
    withSpread(s.postgresCpuMsPerFlow, 2),
    withSpread(s.r, 3),
  ]);
  return markdownTable(
    [
      'median (min–max) over rounds',
      'flows/s',
      'p50 ms',
      'p99 ms',
      ...countHeaders,
      'Node CPU ms / flow',
      'PostgreSQL CPU ms / flow',
      'R',
    ],
    rows,
  );
}

function renderRatios({ summary }: PeerModeReport): string {
  const rows = summary.ratios.map((r) => [
    `c=${r.concurrency}`,
    r.perRound.map((p) => fixed(p.flowsPerSecond, 2)).join(', ') || '–',
    withSpread(r.flowsPerSecond, 2),
    r.perRound.map((p) => fixed(p.latencyP50, 2)).join(', ') || '–',
    withSpread(r.latencyP50, 2),
    withSpread(r.latencyP99, 2),
  ]);
  return markdownTable(
    [
      'Sagaflow ÷ DBOS',
      'flows/s per round',
      'flows/s median (min–max)',
      'p50 per round',
      'p50 median (min–max)',
      'p99 median (min–max)',
    ],
    rows,
  );
}

/** What each system sends per flow, by statement, at the middle concurrency: where the counts come from. */
function renderStatementLabels({ summary }: PeerModeReport): string {
  const c = summary.concurrencies[Math.floor(summary.concurrencies.length / 2)];
  const tables = summary.systems
    .filter((s) => s.concurrency === c && s.statementsByLabel.length > 0)
    .map((s) =>
      markdownTable(
        [`${s.system} statements / flow at c=${c} (median over rounds)`, 'calls / flow'],
        s.statementsByLabel
          .filter(([, perFlow]) => perFlow >= 0.05)
          .map(([label, perFlow]) => [`\`${label}\``, fixed(perFlow, 2)]),
      ),
    );
  return tables.join('\n\n');
}

/** How Sagaflow's runs reached its worker pool at each concurrency: the counters behind its job claims (ADR 0038 addendum). */
function renderPoolCounters({ summary }: PeerModeReport): string {
  const pools = summary.systems.filter((s) => s.poolCountersPerFlow.length > 0);
  const first = pools[0];
  if (!first) return '';
  return markdownTable(
    [`${first.system} worker pool / flow (median over rounds)`, ...pools.map((s) => `c=${s.concurrency}`)],
    first.poolCountersPerFlow.map(([label], i) => [
      label,
      ...pools.map((s) => fixed(s.poolCountersPerFlow[i]?.[1], 2)),
    ]),
  );
}

function renderCeilings({ ceilings }: PeerModeReport): string {
  const tps = ceilings.map((c) => `${fixed(c.tps, 0)} tps at ${c.clients}`).join(' / ');
  return `pgbench (\`update t set v = v + 1 where id = :id\`, random id in a 100-row table, own database, same server): ${tps} client(s).`;
}

/**
 * The comparison for one durability mode: headline, ceilings, per-round ratios and, unless `brief`
 * (the README's copy), the detail with spreads and the statements by label.
 */
export function renderPeerMode(report: PeerModeReport, options: { brief?: boolean } = {}): string {
  const detail = options.brief
    ? []
    : ['', renderDetail(report), '', renderStatementLabels(report), '', renderPoolCounters(report)];
  return [
    `### ${modeTitle[report.summary.mode]}`,
    '',
    `Server: ${report.server}.`,
    '',
    renderHeadline(report),
    '',
    renderCeilings(report),
    'R = steps/s ÷ the 4-client tps (3 steps per flow); per system and concurrency in the detail table.',
    '',
    renderRatios(report),
    ...(report.summary.mode === 'durable' ? ['', renderPeerTargets(report.summary, report.ceilings)] : []),
    ...detail,
  ].join('\n');
}

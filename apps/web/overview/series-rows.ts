import type { Series } from '@/trpc/api-types';
import { colourAt, outcomeColours } from './chart-palette';
import type { ChartSeries } from './time-chart';

type Row = Record<string, number | string | null>;

/** The most a chart draws as separate lines; the rest are summed as "other" so it stays legible. */
export const maxLines = 6;

/** Recharts rows (one per bucket) from parallel count arrays, plus the series to draw. */
function rowsOf(
  s: Series,
  lines: { key: string; label: string; counts: (number | null)[] }[],
  colours?: Record<string, string>,
) {
  const ranked = [...lines].sort((a, b) => total(b.counts) - total(a.counts));
  const kept = ranked.slice(0, maxLines);
  const rest = ranked.slice(maxLines);
  const rows: Row[] = s.buckets.map((t, i) => {
    const row: Row = { t };
    for (const l of kept) row[l.key] = l.counts[i] ?? null;
    if (rest.length > 0) row.other = rest.reduce((n, l) => n + (l.counts[i] ?? 0), 0);
    return row;
  });
  const series: ChartSeries[] = kept.map((l, i) => ({
    key: l.key,
    label: l.label,
    colour: colours?.[l.key] ?? colourAt(i),
  }));
  if (rest.length > 0) series.push({ key: 'other', label: `${rest.length} more`, colour: '#999999' });
  return { rows, series };
}

const total = (counts: (number | null)[]) => counts.reduce<number>((n, c) => n + (c ?? 0), 0);

export function runsRows(s: Series) {
  return rowsOf(
    s,
    [
      { key: 'started', label: 'Started', counts: s.runsStarted },
      ...s.runsFinished.map((f) => ({ key: f.outcome, label: `Finished ${f.outcome}`, counts: f.counts })),
    ],
    outcomeColours,
  );
}

export function transitionRows(s: Series) {
  const several = new Set(s.transitions.map((t) => t.process)).size > 1;
  return rowsOf(
    s,
    s.transitions.map((t) => ({
      key: `${t.process}:${t.from}->${t.to}`,
      label: several ? `${t.process}: ${t.from} → ${t.to}` : `${t.from} → ${t.to}`,
      counts: t.counts,
    })),
  );
}

export function anomalyRows(s: Series) {
  return rowsOf(
    s,
    s.anomalies.map((a) => ({ key: a.code, label: a.code, counts: a.counts })),
  );
}

export function outboxRows(s: Series) {
  return rowsOf(s, [{ key: 'lag', label: 'Longest wait before publishing', counts: s.outbox.maxLagSeconds }]);
}

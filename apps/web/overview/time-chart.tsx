'use client';

import {
  Bar,
  BarChart,
  CartesianGrid,
  Legend,
  Line,
  LineChart,
  ResponsiveContainer,
  Tooltip,
  XAxis,
  YAxis,
} from 'recharts';
import { formatZone } from '@/ui/format-time';
import { bucketLabel } from './bucket-label';

export interface ChartSeries {
  key: string;
  label: string;
  colour: string;
}

/**
 * One chart over the window's buckets: lines (or stacked bars) sharing a time axis, with a y-axis
 * that says its unit, a legend, and a sentence instead of an empty plot when there is nothing to draw.
 */
export function TimeChart({
  title,
  rows,
  series,
  bucket,
  unit,
  kind = 'line',
  empty,
  testId,
  formatValue = (v) => String(v),
}: {
  title: string;
  rows: Record<string, number | string | null>[];
  series: ChartSeries[];
  bucket: 'minute' | 'hour';
  /** The y-axis label: what a value counts ("runs per minute"). */
  unit: string;
  kind?: 'line' | 'bar';
  empty: string;
  testId: string;
  formatValue?: (v: number) => string;
}) {
  const hasData =
    series.length > 0 && rows.some((r) => series.some((s) => typeof r[s.key] === 'number' && r[s.key] !== 0));
  const Chart = kind === 'bar' ? BarChart : LineChart;
  // What is drawn, summed: lets a test (or a curious operator's devtools) see the figures change.
  const total = rows.reduce(
    (n, r) => n + series.reduce((m, s) => m + (typeof r[s.key] === 'number' ? Number(r[s.key]) : 0), 0),
    0,
  );
  return (
    <figure className="chart" data-testid={testId} data-has-data={hasData} data-total={total}>
      <figcaption>
        <h3>{title}</h3>
        <span className="muted">{unit}</span>
      </figcaption>
      {hasData ? (
        <div className="chart-plot">
          <ResponsiveContainer width="100%" height={220}>
            <Chart data={rows} margin={{ top: 8, right: 12, bottom: 4, left: 0 }}>
              <CartesianGrid stroke="#e5e7eb" vertical={false} />
              <XAxis
                dataKey="t"
                tickFormatter={(t: string) => bucketLabel(t, bucket)}
                minTickGap={28}
                tick={{ fontSize: 12, fill: '#374151' }}
              />
              <YAxis
                allowDecimals={kind === 'line' && unit.includes('seconds')}
                width={52}
                tick={{ fontSize: 12, fill: '#374151' }}
                tickFormatter={(v: number) => formatValue(v)}
              />
              <Tooltip
                labelFormatter={(t) => (typeof t === 'string' ? `${bucketLabel(t, bucket)} ${formatZone(t)}` : '')}
                formatter={(v) => (typeof v === 'number' ? formatValue(v) : String(v))}
              />
              <Legend wrapperStyle={{ fontSize: 12 }} />
              {series.map((s) =>
                kind === 'bar' ? (
                  <Bar
                    key={s.key}
                    dataKey={s.key}
                    name={s.label}
                    stackId="a"
                    fill={s.colour}
                    isAnimationActive={false}
                  />
                ) : (
                  <Line
                    key={s.key}
                    dataKey={s.key}
                    name={s.label}
                    stroke={s.colour}
                    strokeWidth={2}
                    dot={false}
                    connectNulls={false}
                    isAnimationActive={false}
                  />
                ),
              )}
            </Chart>
          </ResponsiveContainer>
        </div>
      ) : (
        <p className="empty chart-empty" data-testid={`${testId}-empty`}>
          {empty}
        </p>
      )}
    </figure>
  );
}

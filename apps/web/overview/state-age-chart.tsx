'use client';

import { Bar, BarChart, CartesianGrid, Legend, ResponsiveContainer, Tooltip, XAxis, YAxis } from 'recharts';
import type { Overview } from '@/trpc/api-types';
import { shortSeconds } from './bucket-label';

/**
 * Seed 004's oldest_seconds{state}: per process state, how long its stalest open instance has not
 * moved (active and quarantined apart). A snapshot, not a series: the age is now.
 */
export function StateAgeChart({ states }: { states: Overview['instances']['byState'] }) {
  const rows = states.map((s) => ({
    name: `${s.process} · ${s.state}`,
    active: s.oldestActiveSeconds ?? 0,
    quarantined: s.oldestQuarantinedSeconds ?? 0,
  }));
  return (
    <figure className="chart" data-testid="chart-state-age" data-has-data={rows.length > 0}>
      <figcaption>
        <h3>Oldest age per state</h3>
        <span className="muted">time since the stalest open instance moved</span>
      </figcaption>
      {rows.length > 0 ? (
        <div className="chart-plot">
          <ResponsiveContainer width="100%" height={Math.max(160, 36 * rows.length + 60)}>
            <BarChart data={rows} layout="vertical" margin={{ top: 8, right: 12, bottom: 4, left: 0 }}>
              <CartesianGrid stroke="#e5e7eb" horizontal={false} />
              <XAxis type="number" tickFormatter={shortSeconds} tick={{ fontSize: 12, fill: '#374151' }} />
              <YAxis type="category" dataKey="name" width={150} tick={{ fontSize: 11, fill: '#374151' }} />
              <Tooltip formatter={(v) => (typeof v === 'number' ? shortSeconds(v) : String(v))} />
              <Legend wrapperStyle={{ fontSize: 12 }} />
              <Bar dataKey="active" name="Active" fill="#0072B2" isAnimationActive={false} />
              <Bar dataKey="quarantined" name="Quarantined" fill="#D55E00" isAnimationActive={false} />
            </BarChart>
          </ResponsiveContainer>
        </div>
      ) : (
        <p className="empty chart-empty" data-testid="chart-state-age-empty">
          No open process instances: no state has anything waiting.
        </p>
      )}
    </figure>
  );
}

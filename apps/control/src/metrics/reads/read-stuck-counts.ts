import { openRunStatuses } from '@sagaflow/engine';
import { readHeldCountsByPriorKind } from './read-held-runs.ts';
import type { SqlReader } from './sql-reader.ts';

export interface StuckCount {
  /** The kind of reason: the text before the first ':' of `stuck_reason` (replay_blocked, unknown_flow, ...). */
  reason: string;
  count: number;
}

/**
 * Stuck runs by kind of reason. An index-only read of the partial index that holds the stuck runs'
 * reasons and statuses alone (migration 0020): it costs what is stuck, not the history, and reads no
 * table page per run (a heap fetch per stuck run was 34-89 ms at 500 k runs, ADR 0036). A run the
 * monitor found held lately counts under `run_held` instead of the reason it carried before, whose row
 * nothing could change (ADR 0138): each stuck run once.
 */
export async function readStuckCounts(db: SqlReader): Promise<StuckCount[]> {
  const counts = await db.$queryRaw<StuckCount[]>`
    select split_part(stuck_reason, ':', 1) as reason, count(*)::int as count
      from "sagaflow"."flow_runs"
     where status = any(${[...openRunStatuses]}::text[]) and stuck_reason is not null
     group by 1
     order by 1`;
  const held = await readHeldCountsByPriorKind(db);
  if (held.length === 0) return counts;
  const byReason = new Map(counts.map((c) => [c.reason, c.count]));
  for (const h of held) {
    if (h.kind !== null) byReason.set(h.kind, (byReason.get(h.kind) ?? 0) - h.count);
    byReason.set('run_held', (byReason.get('run_held') ?? 0) + h.count);
  }
  return [...byReason]
    .filter(([, count]) => count > 0)
    .map(([reason, count]) => ({ reason, count }))
    .sort((a, b) => (a.reason < b.reason ? -1 : a.reason > b.reason ? 1 : 0));
}

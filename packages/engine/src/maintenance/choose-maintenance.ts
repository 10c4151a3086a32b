import type { MaintenanceCommand } from '../store/maintenance/maintain-table.ts';
import type { TableActivity } from '../store/maintenance/read-table-activity.ts';

/** One table the pass will vacuum or analyze, and the counters that made it due. */
export interface MaintenanceStep extends TableActivity {
  command: MaintenanceCommand;
}

/**
 * PostgreSQL's own autovacuum defaults (autovacuum_vacuum_threshold / _scale_factor,
 * autovacuum_analyze_threshold / _scale_factor): the engine keeps PGlite's tables as a server's
 * autovacuum would keep them, no more eagerly.
 */
export const maintenanceThresholds = {
  vacuum: { rows: 50, fraction: 0.2 },
  analyze: { rows: 50, fraction: 0.1 },
} as const;

/**
 * Which tables are due, worst first (most dead row versions, then most changes since analyze):
 * a vacuum (with an analyze, since its rows moved) when the dead row versions pass
 * 50 + 20 % of the table, an analyze alone when the changes since the last one pass 50 + 10 %, or
 * when a table holding pages was never analyzed (reltuples -1) whatever its counters say.
 */
export function chooseMaintenance(tables: readonly TableActivity[]): MaintenanceStep[] {
  const steps: MaintenanceStep[] = [];
  for (const t of tables) {
    const rows = Math.max(t.reltuples, 0);
    const { vacuum, analyze } = maintenanceThresholds;
    if (t.deadTuples > vacuum.rows + vacuum.fraction * rows) steps.push({ ...t, command: 'vacuum-analyze' });
    else if (t.modifiedSinceAnalyze > analyze.rows + analyze.fraction * rows || (t.reltuples < 0 && t.bytes > 0))
      steps.push({ ...t, command: 'analyze' });
  }
  return steps.sort((a, b) => b.deadTuples - a.deadTuples || b.modifiedSinceAnalyze - a.modifiedSinceAnalyze);
}

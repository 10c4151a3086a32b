import type { Logger } from 'pino';
import type { SqlSession } from '../db/database.ts';
import { maintainTable, type MaintenanceCommand } from '../store/maintenance/maintain-table.ts';
import { readTableActivity } from '../store/maintenance/read-table-activity.ts';
import { chooseMaintenance } from './choose-maintenance.ts';

/** One table vacuumed or analyzed by a pass. */
export interface MaintainedTable {
  table: string;
  command: MaintenanceCommand;
  /** Dead row versions before the step. */
  deadTuples: number;
  ms: number;
}

export interface MaintenancePass {
  tables: MaintainedTable[];
  /** The pass was asked to stop between two tables: the rest waits for the next pass. */
  interrupted: boolean;
}

/**
 * Reads the engine tables' activity, then vacuums or analyzes each due table (see
 * {@link chooseMaintenance}) one statement at a time, logging each: PGlite serves the statements
 * queued meanwhile between two tables, so the hot path waits for one table at most, never a pass.
 * `keepGoing` is asked before each table, so stopping waits for one table, not the rest.
 */
export async function runMaintenancePass(
  session: SqlSession,
  logger: Logger,
  keepGoing: () => boolean = () => true,
): Promise<MaintenancePass> {
  const due = chooseMaintenance(await readTableActivity(session));
  const tables: MaintainedTable[] = [];
  for (const step of due) {
    if (!keepGoing()) return { tables, interrupted: true };
    const began = performance.now();
    await maintainTable(session, step.table, step.command);
    const ms = Math.round(performance.now() - began);
    tables.push({ table: step.table, command: step.command, deadTuples: step.deadTuples, ms });
    logger.info(
      {
        table: step.table,
        command: step.command,
        dead_tuples: step.deadTuples,
        modified_since_analyze: step.modifiedSinceAnalyze,
        reltuples: step.reltuples,
        ms,
      },
      step.command === 'analyze' ? 'embedded maintenance analyzed a table' : 'embedded maintenance vacuumed a table',
    );
  }
  return { tables, interrupted: false };
}

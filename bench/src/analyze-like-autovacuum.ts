import { withPgClient } from './with-pg-client.ts';

/**
 * Gives the database at `url` (as the role that owns its tables) the planner statistics autovacuum
 * would have given it by now: an ANALYZE of every table, in one transaction (one commit, one
 * transaction id, whatever the number of tables).
 * A phase's database is a fresh clone of an empty template, and a phase lasts seconds, shorter than
 * autovacuum's first nap (1 min): without this, every statement a system prepares is planned for
 * empty tables and keeps that plan for the whole phase, a state a deployment leaves within its first
 * minute (ADR 0051). Its three statements and one commit count in the phase's per-flow figures, a
 * few thousandths per flow.
 */
/**
 * Flows a warm-up runs at least before {@link analyzeLikeAutovacuum}: with a timed warm-up alone, a slow
 * machine analyzed a flow_runs of a few hundred rows, on which the planner scans the table for each
 * foreign-key check, and each check then read the whole growing table through the measured window
 * (ADR 0068, ADR 0086). A thousand runs is well past where the key's index wins.
 */
export const warmupFlowsBeforeAnalyze = 1_000;

export async function analyzeLikeAutovacuum(url: string): Promise<void> {
  await withPgClient(url, async (c) => {
    await c.query('begin');
    await c.query('analyze');
    await c.query('commit');
  });
}

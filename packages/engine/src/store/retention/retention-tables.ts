/**
 * The tables retention deletes from, in the order a report lists them. The audit trail
 * (repair_commands, audit_events), the anomaly log and the instances themselves are not among them.
 * `workers` loses only the rows of worker pools gone before the cutoff that no Running step names.
 */
export const retentionTables = [
  'flow_runs',
  'action_runs',
  'compensation_runs',
  'flow_events',
  'signals',
  'timers',
  'jobs',
  'process_transitions',
  'outbox',
  'inbox',
  'workers',
] as const;
export type RetentionTable = (typeof retentionTables)[number];
export type RetentionRowCounts = Record<RetentionTable, number>;

/** A count of zero rows in every retention table. */
export function noRetentionRows(): RetentionRowCounts {
  return Object.fromEntries(retentionTables.map((t) => [t, 0])) as RetentionRowCounts;
}

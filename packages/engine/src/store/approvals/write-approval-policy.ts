import type { Db } from '../types.ts';

/** Stores the approval policy (the one row, id 1), replacing the one before. */
export async function writeApprovalPolicy(
  db: Db,
  p: { gatedCommands: string[]; bulkThreshold: number | null; at: Date; by: string },
): Promise<void> {
  await db.$executeRaw`
    insert into "sagaflow"."repair_approval_policy" (id, gated_commands, bulk_threshold, updated_at, updated_by)
    values (1, ${p.gatedCommands}::text[], ${p.bulkThreshold}::int, ${p.at}::timestamptz, ${p.by})
    on conflict (id) do update set gated_commands = excluded.gated_commands, bulk_threshold = excluded.bulk_threshold,
       updated_at = excluded.updated_at, updated_by = excluded.updated_by`;
}

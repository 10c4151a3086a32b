import type { Json } from '../definitions/define-action.ts';
import type { RawDb } from '../db/raw-db.ts';

export interface NewFlowRun {
  flowName: string;
  flowVersion: number;
  input: Json;
  businessKey: string | null;
  tags: string[];
  expiresAt: Date | null;
  runTimeoutAt: Date | null;
  parent?: { runId: string; sequence: number; cancelPolicy: 'propagate' | 'abandon' };
  now: Date;
}

/** Inserts a run (Pending) and returns its id; a child run carries its parent's step and cancellation policy. */
export async function insertFlowRun(db: RawDb, row: NewFlowRun): Promise<string> {
  const [created] = await db.$queryRaw<{ id: string }[]>`
    insert into "sagaflow"."flow_runs"
      (flow_name, flow_version, input, business_key, tags, expires_at, run_timeout_at,
       parent_run_id, parent_sequence, parent_cancel_policy, created_at, updated_at)
    values (${row.flowName}, ${row.flowVersion}::int, ${JSON.stringify(row.input)}::jsonb, ${row.businessKey},
            array(select jsonb_array_elements_text(${JSON.stringify(row.tags)}::jsonb)), ${row.expiresAt}::timestamptz, ${row.runTimeoutAt}::timestamptz,
            ${row.parent?.runId ?? null}::uuid, ${row.parent?.sequence ?? null}::int, ${row.parent?.cancelPolicy ?? null},
            ${row.now}::timestamptz, ${row.now}::timestamptz)
    returning id`;
  if (!created) throw new Error(`the run of ${row.flowName} was not inserted`);
  return created.id;
}

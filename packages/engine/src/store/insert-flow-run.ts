import type { Json } from '../definitions/define-action.ts';
import type { Db } from './types.ts';

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

export async function insertFlowRun(db: Db, row: NewFlowRun): Promise<string> {
  const created = await db.flowRun.create({
    data: {
      flow_name: row.flowName,
      flow_version: row.flowVersion,
      input: row.input as never,
      business_key: row.businessKey,
      tags: row.tags,
      expires_at: row.expiresAt,
      run_timeout_at: row.runTimeoutAt,
      parent_run_id: row.parent?.runId ?? null,
      parent_sequence: row.parent?.sequence ?? null,
      parent_cancel_policy: row.parent?.cancelPolicy ?? null,
      created_at: row.now,
      updated_at: row.now,
    },
    select: { id: true },
  });
  return created.id;
}

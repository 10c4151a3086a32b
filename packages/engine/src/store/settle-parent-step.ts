import { openRunStatusesSql } from './step-table.ts';
import type { Json } from '../definitions/define-action.ts';
import { appendFlowEvent } from './append-flow-event.ts';
import { enqueueJob } from './enqueue-job.ts';
import { settleWaitStep } from './settle-wait-step.ts';
import type { RawDb } from '../db/raw-db.ts';

/**
 * A child run finished: settle the parent's waiting step and wake the parent, in the child's finish
 * transaction. A parent that has itself finished is not written to. Returns the parent's id when
 * the write was refused for that reason, else null.
 */
export async function settleParentStep(
  tx: RawDb,
  args: {
    parentRunId: string;
    parentSequence: number;
    childRunId: string;
    result: { status: string; output?: Json; error?: Json };
    now: Date;
  },
): Promise<string | null> {
  const parent = await tx.$queryRaw<{ open: boolean; step_id: string | null }[]>`
    select r.status in ${openRunStatusesSql} as open, s.id::text as step_id
      from "sagaflow"."flow_runs" r
      left join "sagaflow"."action_runs" s on s.run_id = r.id and s.sequence = ${args.parentSequence}::int
     where r.id = ${args.parentRunId}::uuid
       for no key update of r`;
  const p = parent[0];
  if (!p) return null;
  if (!p.open) return args.parentRunId;
  const { result } = args;
  const settled =
    p.step_id !== null &&
    (await settleWaitStep(tx, {
      id: p.step_id,
      now: args.now,
      ...(result.status === 'Completed'
        ? { status: 'Completed', output: result.output ?? null }
        : { status: 'Errored', error: { status: result.status, error: result.error ?? null } }),
    }));
  if (!settled) return null;
  await appendFlowEvent(tx, {
    runId: args.parentRunId,
    type: 'child.finished',
    sequence: args.parentSequence,
    data: { child: args.childRunId, status: result.status },
  });
  await enqueueJob(tx, { kind: 'wake-run', runId: args.parentRunId, availableAt: args.now });
  return null;
}

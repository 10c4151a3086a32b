import { EngineError } from '../errors/engine-error.ts';
import { assertInteger } from '../input/assert-integer.ts';
import { assertStorableText } from '../input/assert-storable-text.ts';
import { textRules } from '../input/input-limits.ts';
import { findFailingTimeouts } from '../store/find-failing-timeouts.ts';
import { findSagaInstance } from '../store/find-saga-instance.ts';
import { findSagaInstancesByStatus } from '../store/find-saga-instances-by-status.ts';
import { decodeState } from './decode-state.ts';
import { instanceStatuses, toProcessInstance, type InstanceStatus, type ProcessInstance } from './instance-view.ts';
import type { ProcessDeps } from './process-deps.ts';
import { requireInstanceId } from './run-operator-command.ts';

/**
 * One instance by id. Its state is decoded when it still decodes, else null; it is found either way.
 * With its failing timeout, if one keeps failing (ADR 0127).
 */
export async function findInstance(deps: ProcessDeps, instanceId: string): Promise<ProcessInstance | null> {
  const row = await findSagaInstance(deps.prisma, requireInstanceId(instanceId));
  if (!row) return null;
  const def = deps.definitions.get(row.process_name);
  const decoded = def ? decodeState(def, row.state) : null;
  const failing = await findFailingTimeouts(deps.prisma, [row.id]);
  return toProcessInstance(row, decoded?.ok ? decoded.data : null, failing.get(row.id));
}

/**
 * Instances in `status` whose updatedAt is strictly before `updatedBefore`, least recently updated
 * first, at most `limit`: no paging (seed 002). State is never read, so it costs little and lists
 * instances whose state no longer decodes (with state null). Each carries its failing timeout, if
 * one keeps failing (ADR 0127), read by the listed ids.
 */
export async function findInstancesByStatus(
  deps: ProcessDeps,
  status: InstanceStatus,
  updatedBefore: Date,
  limit: number,
  opts: { processName?: string } = {},
): Promise<ProcessInstance[]> {
  if (!instanceStatuses.includes(status))
    throw new EngineError('invalid_input', `status: must be one of ${instanceStatuses.join(', ')}`, {
      field: 'status',
    });
  if (!(updatedBefore instanceof Date) || Number.isNaN(updatedBefore.getTime()))
    throw new EngineError('invalid_input', 'updatedBefore: must be a valid date', { field: 'updatedBefore' });
  assertInteger(limit, 'limit', 1, 10_000);
  const processName =
    opts.processName === undefined
      ? undefined
      : assertStorableText(opts.processName, 'processName', textRules(deps.limits));
  const rows = await findSagaInstancesByStatus(deps.prisma, { status, updatedBefore, limit, processName });
  const failing = await findFailingTimeouts(
    deps.prisma,
    rows.map((r) => r.id),
  );
  return rows.map((r) => toProcessInstance(r, null, failing.get(r.id)));
}

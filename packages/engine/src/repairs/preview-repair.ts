import { EngineError } from '../errors/engine-error.ts';
import { findRepairCommand } from '../store/repairs/find-repair-command.ts';
import { parseRepairCommand, type RepairCommand } from './repair-command.ts';
import { repairCatalogue } from './repair-catalogue.ts';
import { noEffects, type RepairPreview } from './repair-effects.ts';
import type { RepairDeps, RepairHandler } from './repair-handler.ts';
import { instanceRepairHandlers, runRepairHandlers } from './repair-handlers.ts';
import {
  expectationHolds,
  instanceActual,
  readInstanceTarget,
  readRunTarget,
  runActual,
} from './read-repair-target.ts';

/**
 * What {@link applyRepair} would do now, computed by the same handler from the same reads, without
 * a lock and without writing anything: whether the expected state holds, the state found, what would
 * block it, and its effects (transitions, compensations, jobs, signals, outbox messages, history).
 * Applying it later checks everything again under the lock.
 */
export async function previewRepair(
  deps: RepairDeps,
  raw: unknown,
): Promise<RepairPreview & { decided: { id: string; status: string } | null }> {
  const cmd = parseRepairCommand(raw, deps.runtime.config.limits);
  const db = deps.runtime.prisma;
  const isRun = 'runId' in cmd.target;
  const handler = (isRun ? runRepairHandlers[cmd.kind] : instanceRepairHandlers[cmd.kind]) as
    RepairHandler<RepairCommand, unknown, unknown> | undefined;
  if (!handler) throw new EngineError('invalid_input', `kind: "${cmd.kind}" has no handler`, { field: 'kind' });
  const target = isRun
    ? await readRunTarget(db, cmd as never, false)
    : await readInstanceTarget(db, deps, cmd as never, false);
  const actual = isRun ? runActual(target as never, cmd as never) : instanceActual(target as never);
  const expectedHolds = expectationHolds(cmd, actual);
  let blockers: string[];
  let effects = noEffects();
  try {
    const prepared = handler.prepare ? await handler.prepare(deps, cmd, target) : undefined;
    const plan = await handler.plan(db, deps, cmd, target, prepared);
    blockers = plan.blockers;
    effects = plan.effects;
  } catch (err) {
    if (!(err instanceof EngineError) || err.code === 'invalid_input') throw err;
    blockers = [err.message];
  }
  const prior = await findRepairCommand(db, cmd.idempotencyKey);
  const info = repairCatalogue[cmd.kind];
  return {
    kind: cmd.kind,
    expectedHolds,
    actual,
    applicable: expectedHolds && blockers.length === 0 && prior === null,
    blockers,
    effects,
    destructive: info.destructive,
    adminOnly: info.adminOnly,
    decided: prior ? { id: prior.id, status: prior.status } : null,
  };
}

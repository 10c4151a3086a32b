import { EngineError } from '../errors/engine-error.ts';
import { findRepairCommand } from '../store/repairs/find-repair-command.ts';
import { parseRepairCommand } from './repair-command.ts';
import { repairCatalogue } from './repair-catalogue.ts';
import { noEffects, type RepairPreview } from './repair-effects.ts';
import type { RepairDeps } from './repair-handler.ts';
import { expectationHolds, readRepairTarget } from './read-repair-target.ts';

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
  const { handler, target, actual } = await readRepairTarget(db, deps, cmd, false);
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

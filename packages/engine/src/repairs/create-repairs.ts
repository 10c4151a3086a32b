import { EngineError } from '../errors/engine-error.ts';
import { applyBulkRepair, type BulkRepairResult } from './apply-bulk-repair.ts';
import { applyRepair } from './apply-repair.ts';
import { repairCatalogue, type RepairCommandInfo } from './repair-catalogue.ts';
import type { RepairCommand, RepairKind } from './repair-command.ts';
import type { RepairPreview, RepairResult } from './repair-effects.ts';
import type { RepairDeps } from './repair-handler.ts';
import { previewRepair } from './preview-repair.ts';
import { parseBulk } from './apply-bulk-repair.ts';
import { safeRepairsFor } from './safe-repairs.ts';

/** The engine's repair API: one code path for an embedding service, the control plane and the CLI. */
export interface Repairs {
  /** Every command, with what a caller needs to gate it (destructive, admin only). */
  readonly catalogue: Readonly<Record<RepairKind, RepairCommandInfo>>;
  /** What `apply` would do now; writes nothing. */
  preview(command: RepairCommand): Promise<RepairPreview & { decided: { id: string; status: string } | null }>;
  /** Applies it in one transaction under the target's lock, or throws repair_conflict / repair_refused. */
  apply(command: RepairCommand): Promise<RepairResult>;
  /** A preview of each item of a bulk command (nothing written); an item whose target does not exist is `notFound`. */
  previewBulk(
    command: unknown,
  ): Promise<((RepairPreview & { decided: { id: string; status: string } | null }) | { notFound: string })[]>;
  /** One command over many targets, item by item, each with its own expected state and audit row. */
  applyBulk(command: unknown): Promise<BulkRepairResult>;
  /** The run repairs safe for a run's status and stuck reason. */
  safeFor(run: { status: string; stuckReason: string | null }): RepairKind[];
}

export function createRepairs(deps: RepairDeps, nudge: () => void): Repairs {
  return {
    catalogue: repairCatalogue,
    preview: (cmd) => previewRepair(deps, cmd),
    async apply(cmd) {
      const r = await applyRepair(deps, cmd);
      nudge();
      return r;
    },
    async previewBulk(cmd) {
      const out = [];
      for (const item of parseBulk(deps, cmd)) {
        try {
          out.push(await previewRepair(deps, item));
        } catch (err) {
          if (
            !(err instanceof EngineError) ||
            (err.code !== 'run_not_found' && err.code !== 'instance_not_found' && err.code !== 'outbox_not_found')
          )
            throw err;
          out.push({ notFound: err.message });
        }
      }
      return out;
    },
    async applyBulk(cmd) {
      const r = await applyBulkRepair(deps, cmd);
      nudge();
      return r;
    },
    safeFor: safeRepairsFor,
  };
}

import { openRunStatuses } from '../store/types.ts';
import type { RepairKind } from './repair-command.ts';

/** The kind of a stuck reason: the text before its first ':' (`replay_blocked: step 3 ...`). */
export function stuckReasonKind(stuckReason: string): string {
  return stuckReason.split(':', 1)[0]?.trim() ?? '';
}

/**
 * The run-level repairs safe for a stuck run, by the kind of reason the engine gave. Each list holds
 * at least `run.kick` and `run.terminate`, so every stuck run has a safe repair (invariant 3).
 * - replay_blocked: the code no longer matches the record. Deploy matching code and kick, or resume
 *   from the step that no longer matches. Cancel and expire need a replay and cannot compensate here.
 * - unknown_flow / unknown_action: deploy the missing code and kick; complete the step by hand.
 * - no_worker_for_version: the run's flow version is newer than the worker's code (ADR 0112); its
 *   wake waits for a worker with that version; kick, or terminate.
 * - claim_not_committed: something in the claim's transaction failed; fix it and kick.
 * - expiry_failed: the rollback cannot be planned; fix the code and kick, or resume from a step.
 * - owner_gone: the worker holding a Running step is gone (ADR 0010); reclaim that step (or kick,
 *   which reclaims every such step of the run) and it runs again (its side effect may have happened
 *   once already), or terminate.
 * - child_stuck: a child the run waits on is stuck (ADR 0124); repair the child (its reason says how),
 *   or terminate the parent, which ends the child with it (ADR 0089). Kicking the parent only replays it
 *   onto the same wait.
 * - run_held: another session holds the run's row (or a step's, a child's), so nothing can be written to it
 *   (ADR 0137); the control plane shows it as this kind (ADR 0138). End that session; a kick or a terminate
 *   answers `target_busy` while it holds on and works once it lets go.
 */
export const safeRepairsByStuckReason: Readonly<Record<string, readonly RepairKind[]>> = {
  replay_blocked: ['run.kick', 'run.resume_from_step', 'run.terminate'],
  unknown_flow: ['run.kick', 'run.terminate'],
  no_worker_for_version: ['run.kick', 'run.terminate'],
  unknown_action: ['run.kick', 'run.complete_step', 'run.terminate'],
  claim_not_committed: ['run.kick', 'run.retry_step', 'run.terminate'],
  expiry_failed: ['run.kick', 'run.resume_from_step', 'run.terminate'],
  owner_gone: ['run.kick', 'run.reclaim_step', 'run.terminate'],
  child_stuck: ['run.kick', 'run.terminate'],
  run_held: ['run.kick', 'run.terminate'],
};

/** For a stuck reason the table does not know (a newer engine's): the repairs that are always safe. */
const alwaysSafe: readonly RepairKind[] = ['run.kick', 'run.terminate'];

/** What an open, healthy run can take. */
const openRun: readonly RepairKind[] = [
  'run.kick',
  'run.signal',
  'run.cancel',
  'run.expire',
  'run.terminate',
  'run.retry_step',
  'run.reclaim_step',
  'run.complete_step',
  'run.resume_from_step',
];

/**
 * The repairs safe for a run as it is: none for a finished run (a terminal state is never changed);
 * for a stuck run, those its stuck reason allows; otherwise the open-run catalogue. Step commands
 * in the list still check their step when applied.
 *
 * @example
 * safeRepairsFor({ status: 'Waiting', stuckReason: 'replay_blocked: step 3 ...' });
 * // ['run.kick', 'run.resume_from_step', 'run.terminate']
 */
export function safeRepairsFor(run: { status: string; stuckReason: string | null }): RepairKind[] {
  if (!(openRunStatuses as readonly string[]).includes(run.status)) return [];
  if (run.stuckReason === null) return [...openRun];
  return [...(safeRepairsByStuckReason[stuckReasonKind(run.stuckReason)] ?? alwaysSafe)];
}

import type { DbActionRun } from '../../store/list-action-runs.ts';
import type { ReplaySession } from '../replay/replay-session.ts';

export type HistoryVerdict =
  | { kind: 'new' }
  | { kind: 'recorded'; row: DbActionRun }
  /** A cancellation was delivered at this point of the history: the code's call gets it instead. */
  | { kind: 'cancel-delivered' }
  /** Cancellation is requested and this call is where it is delivered, now. */
  | { kind: 'deliver-cancel' }
  | { kind: 'blocked' };

/**
 * The history contract: at sequence `seq` the code asks for a step of `kind` named `name`; the
 * record must say the same. When it does not (a renamed, removed or reordered step), the run is
 * replay-blocked: it stays open with that reason and nothing runs, so no wrong step executes.
 */
export function checkHistory(session: ReplaySession, seq: number, kind: string, name: string): HistoryVerdict {
  const row = session.recorded.get(seq);
  if (row?.kind === 'cancel') return { kind: 'cancel-delivered' };
  if (row && (row.kind !== kind || row.name !== name)) {
    session.stop({
      waitingFor: null,
      stuckReason: `replay_blocked: step ${seq} is recorded as ${row.kind} "${row.name}" but the code now asks for ${kind} "${name}" (flow ${session.run.flow_name} v${session.run.flow_version}); deploy code that matches the record, then kick the run`,
    });
    return { kind: 'blocked' };
  }
  if (row) return { kind: 'recorded', row };
  if (session.cancelRequested && !session.cancellationDelivered) return { kind: 'deliver-cancel' };
  return { kind: 'new' };
}

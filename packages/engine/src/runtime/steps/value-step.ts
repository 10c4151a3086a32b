import type { Json } from '../../definitions/define-action.ts';
import type { ReplaySession } from '../replay/replay-session.ts';

/**
 * ctx.now()/random()/uuid(): the recorded value on replay, else a fresh one that is written with the
 * replay's next transaction (nothing durable can depend on it before then). Returns undefined when
 * the history does not match; the caller then stops.
 */
export function valueStep(
  session: ReplaySession,
  name: 'now' | 'random' | 'uuid',
  fresh: () => Json,
): Json | undefined {
  const seq = session.nextSequence();
  const row = session.recorded.get(seq);
  if (row) {
    if (row.kind !== 'value' || row.name !== name) {
      session.stop({
        waitingFor: null,
        stuckReason: `replay_blocked: step ${seq} is recorded as ${row.kind} "${row.name}" but the code now asks for value "${name}" (flow ${session.run.flow_name} v${session.run.flow_version}); deploy code that matches the record, then kick the run`,
      });
      return undefined;
    }
    return row.output as Json;
  }
  const value = fresh();
  session.pendingValues.push({
    runId: session.runId,
    sequence: seq,
    kind: 'value',
    name,
    input: null,
    status: 'Completed',
    output: value,
  });
  return value;
}

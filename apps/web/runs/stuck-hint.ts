/** What an operator can do about each kind of stuck reason the engine writes (`code: details`). */
const hints: Record<string, string> = {
  replay_blocked: 'Deploy code that matches the recorded history, then kick the run.',
  claim_not_committed: "A listener inside the engine's transaction failed; fix it, then kick the run.",
  unknown_flow: 'Register the flow on a worker (deploy a worker that has it): its wake waits for one, no kick needed.',
  no_worker_for_version:
    "Deploy a worker with the run's flow version: its wake waits for one and the run goes on, no kick needed.",
  unknown_action: 'Register the action on a worker (deploy a worker that has it).',
  owner_gone:
    'The worker that held the step is gone; reclaim the step (or kick the run) to run it again, knowing its side effect may have happened once already.',
  expiry_failed:
    'The run is past its deadline but its code throws on replay; fix what it reads (or deploy matching code): the monitor retries when the hold-off ends.',
  run_held:
    "Another database session holds this run: find it in pg_stat_activity (state 'idle in transaction', its query names the run's tables) and end its transaction; until then a kick or a terminate answers that the run is busy, and the monitor does its work once the run is let go.",
};

export interface StuckHint {
  /** The reason's leading code (`replay_blocked`), or null when it has none. */
  code: string | null;
  /** One line on what to do, or null for a code this console does not know. */
  hint: string | null;
}

/**
 * An `expiry_failed` whose expiry itself failed (it outlasted its time limit, ADR 0135's addendum), not its
 * rollback's plan: the code is not at fault.
 */
const expiryNotWritten =
  'The run is past its deadline but its expiry did not finish (a run with very many open children can outlast sweeps.transaction_timeout_ms): raise the limit, or terminate the run; the monitor retries when the hold-off ends.';

/** Reads the code off a stuck reason and the matching one-line hint. */
export function stuckHint(reason: string): StuckHint {
  const code = /^([a-z][a-z0-9_]*):/.exec(reason)?.[1] ?? null;
  if (code === 'expiry_failed' && reason.includes('its expiry could not be written'))
    return { code, hint: expiryNotWritten };
  return { code, hint: code ? (hints[code] ?? null) : null };
}

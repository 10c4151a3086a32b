/**
 * What the CLI's exit status means (README "Operator CLI", `sagaflow help`, ADR 0021). A script
 * can tell "done" from "nothing changed, draft it again" from "not done yet, waiting for approval".
 */
export const exitCodes = {
  /** Done: the command did what it says (a repair applied, or replayed its first applied result). */
  done: 0,
  /** An error: the control plane unreachable, a 404 or 5xx, a local failure. Nothing is known to have changed, unless a repair was sent and its answer was cut off (the message then gives the key to retry it with). */
  error: 1,
  /** Refused: a repair whose expected state no longer holds (repair_conflict) or that its target cannot take (repair_refused); a dry run that would be refused; a sweep that did not run. Nothing changed. */
  refused: 2,
  /** Unauthenticated or forbidden: no token, a token no HTTP header can carry (a pasted hint), a refused token (unknown, revoked, expired, rate-limited), or a role too low. */
  unauthorised: 3,
  /** Not done yet: the repair waits for a second operator's approval (nothing changed until it is approved). */
  awaitingApproval: 4,
  /** Usage: a bad command line, or input the control plane refused as malformed (400, 413, 422: the message names the field). */
  usage: 64,
} as const;

export type ExitCode = (typeof exitCodes)[keyof typeof exitCodes];

/** The exit status of a repair's answer: applied is done, a status naming approval waits, anything else was not applied. */
export function exitCodeForRepairStatus(status: string): ExitCode {
  if (status === 'applied') return exitCodes.done;
  return /approv/i.test(status) ? exitCodes.awaitingApproval : exitCodes.refused;
}

/**
 * SQLSTATEs of a session the server ended or broke off (connection exceptions, shutdowns and
 * timeouts of the session, internal errors that may be a PANIC): whether the statement committed
 * before it is not known.
 */
const sessionLost = /^(08|57P|XX)/;

/**
 * Did the server refuse the statement, so that none of it was written? An ErrorResponse with a
 * SQLSTATE says so when the session lives on: the autocommitted statement (its commit included) was
 * rolled back. Anything else leaves it open whether the statement committed: a connection lost
 * before its answer came (the server may have committed just before), a session the server ended
 * (FATAL, PANIC, or one of {@link sessionLost}'s codes), or a failure on the client once the answer
 * was in (a row it could not read). Such a statement must not be sent again as if it had written
 * nothing. The code decides, not the severity's text alone: a server with other `lc_messages` says
 * `FEHLER` or `ERREUR` for an ERROR.
 */
export function refusedByServer(err: unknown): boolean {
  if (typeof err !== 'object' || err === null) return false;
  const e = err as { code?: unknown; severity?: unknown };
  return (
    typeof e.code === 'string' &&
    /^[0-9A-Z]{5}$/.test(e.code) &&
    !sessionLost.test(e.code) &&
    e.severity !== 'FATAL' &&
    e.severity !== 'PANIC'
  );
}

/**
 * Did the server refuse the statement, so that none of it was written? Only an ErrorResponse of
 * severity ERROR says so: the autocommitted statement (its commit included) was rolled back, and
 * the session lives on. Anything else leaves it open whether the statement committed: a connection
 * lost before its answer came (the server may have committed just before), a FATAL that ended the
 * session, or a failure on the client once the answer was in (a row it could not read). Such a
 * statement must not be sent again as if it had written nothing.
 */
export function refusedByServer(err: unknown): boolean {
  if (typeof err !== 'object' || err === null) return false;
  const e = err as { code?: unknown; severity?: unknown };
  return typeof e.code === 'string' && /^[0-9A-Z]{5}$/.test(e.code) && e.severity === 'ERROR';
}

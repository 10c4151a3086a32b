/**
 * What a caller is told when the database gave no connection in time (ADR 0130). A read, or any call
 * before its session was checked, did nothing and may simply be sent again; a command stopped at the statement that needed the connection, which was not
 * sent. These are the only 5xx messages that say more than the request id: they carry no internals.
 */
export const databaseBusyMessages = {
  nothingDone:
    'the database gave the control plane no connection in time (its connection pool is busy): nothing was done; try again in a moment',
  commandStopped:
    'the database gave the control plane no connection in time (its connection pool is busy): the command stopped before the statement that needed it; check the audit trail, then send it again (a repair with the same idempotency key is not applied twice)',
} as const;

export function isDatabaseBusyMessage(message: string): boolean {
  return Object.values(databaseBusyMessages).includes(message as never);
}

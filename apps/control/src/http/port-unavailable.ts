/** Errors that say the host part of an address is wrong (no such name, or not this machine's), not the port. */
const hostCodes = new Set(['EADDRNOTAVAIL', 'ENOTFOUND', 'EAI_AGAIN', 'EAI_NONAME', 'EAI_FAIL']);

/**
 * The error that stops a start whose address cannot be listened on: it names the setting and says
 * what to do, whether the probe before the database or the listen itself failed (review 35). A host
 * that does not resolve or is not this machine's is blamed on `hostSetting` (CONTROL_HOST), not on the
 * port (review 34).
 */
export function portUnavailable(
  setting: string,
  host: string,
  port: number,
  err: NodeJS.ErrnoException,
  hostSetting = setting,
): Error {
  const code = err.code ?? err.message;
  const message =
    err.code && hostCodes.has(err.code)
      ? err.code === 'EADDRNOTAVAIL'
        ? `${hostSetting} ${host} is not an address of this host (${code}); set ${hostSetting} to one that is (or 0.0.0.0)`
        : `${hostSetting} ${host} does not resolve to an address (${code}); set ${hostSetting} to an address or name of this host (e.g. 127.0.0.1, or 0.0.0.0 for all)`
      : `${setting} ${port} on ${host} is not available (${code}); stop what is using it or set ${setting} to a free port`;
  return new Error(message, { cause: err });
}

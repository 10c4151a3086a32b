/**
 * The error that stops a start whose address cannot be listened on: it names the setting and says
 * what to do, whether the probe before the database or the listen itself failed (review 35).
 */
export function portUnavailable(setting: string, host: string, port: number, err: NodeJS.ErrnoException): Error {
  const todo =
    err.code === 'EADDRNOTAVAIL'
      ? `${host} is not an address of this host; set ${setting} to one that is (or 0.0.0.0)`
      : `stop what is using it or set ${setting} to a free port`;
  return new Error(`${setting} ${port} on ${host} is not available (${err.code ?? err.message}); ${todo}`, {
    cause: err,
  });
}

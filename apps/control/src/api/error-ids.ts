import { randomUUID } from 'node:crypto';

const ids = new WeakMap<object, string>();

/**
 * The id under which an error the API does not disclose is logged: the request's id when the HTTP
 * server named one first, otherwise a fresh one. The response and the log line get the same id,
 * whichever of tRPC's error formatter and its onError hook asks first.
 */
export function errorIdFor(error: object, requestId?: string): string {
  let id = ids.get(error);
  if (id === undefined) {
    id = requestId ?? randomUUID();
    ids.set(error, id);
  }
  return id;
}

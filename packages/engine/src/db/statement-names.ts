import { createHash } from 'node:crypto';

/** Longer texts go unnamed: a text built from a variable list (a long `IN`) is unlikely to recur. */
const maxNamedLength = 8_000;
/** At most this many distinct named statements per process, so at most this many per connection. */
const maxNames = 200;

const names = new Map<string, string>();

/**
 * The name a statement is prepared under on each connection (node-postgres parses a named statement
 * once per connection, then only binds and executes it): derived from a hash of its text, so the same
 * text has the same name on every connection and in every process, and two texts never share one.
 * Undefined (sent unnamed, parsed every time) once the process has named `maxNames` texts, or for a
 * text longer than `maxNamedLength`: the server keeps every prepared statement until the connection
 * closes, and pg never forgets one, so the set must stay bounded.
 */
export function statementName(text: string): string | undefined {
  const known = names.get(text);
  if (known !== undefined || text.length > maxNamedLength || names.size >= maxNames) return known;
  const name = `sf_${createHash('sha1').update(text).digest('base64url').slice(0, 22)}`;
  names.set(text, name);
  return name;
}

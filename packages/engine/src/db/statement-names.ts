import { createHash } from 'node:crypto';

/** Longer texts go unnamed: a text built from a variable list (a long `IN`) is unlikely to recur. */
const maxNamedLength = 8_000;
/** At most this many distinct named statements per process, so at most this many per connection. */
const maxNames = 200;

const names = new Map<string, string>();
/** How many times a text was renamed (see {@link renameStatement}). */
const generations = new Map<string, number>();

const hashName = (text: string) => `sf_${createHash('sha1').update(text).digest('base64url').slice(0, 22)}`;

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
  const name = hashName(text);
  names.set(text, name);
  return name;
}

/**
 * Gives a named text a new name, so that every connection prepares it afresh. A statement prepared
 * before its result changed shape (a column added to a table it reads with `*`, by a migration
 * applied while this process runs) is refused by the server on every connection that holds it ("cached
 * plan must not change result type"); under the new name each connection plans it again once. The old
 * name stays on the connections that prepared it until they close: one more per such change.
 */
export function renameStatement(text: string): void {
  if (!names.has(text)) return;
  const generation = (generations.get(text) ?? 0) + 1;
  generations.set(text, generation);
  // Longer than any first name (`sf_` and 22 characters): a renamed text never takes another's name.
  names.set(text, `${hashName(text)}_g${generation}`);
}

import { createHash } from 'node:crypto';

/** Longer texts go unnamed: a text built from a variable list (a long `IN`) is unlikely to recur. */
const maxNamedLength = 8_000;
/** At most this many distinct named statements per process, so at most this many per connection. */
const maxNames = 200;

/** A text named for preparing, and the one copy of it that goes to the driver under that name. */
export interface NamedStatement {
  /** The first copy of the text seen: node-postgres compares it with the text it prepared under the name, by identity then. */
  readonly text: string;
  name: string;
  /** How many times it was renamed (see {@link renameStatement}). */
  generation: number;
}

/**
 * The named texts by length. Each statement's text is built afresh per call (Prisma.sql concatenates
 * its fragments), so a Map keyed by the text would hash all of it every call (3 % of the engine's CPU
 * at c=8); the few texts of the same length are compared with it instead, which stops at the first
 * character that differs and otherwise compares memory. Equal texts only: two texts never share a name.
 */
const byLength = new Map<number, NamedStatement[]>();
let count = 0;

const hashName = (text: string) => `sf_${createHash('sha1').update(text).digest('base64url').slice(0, 22)}`;

function find(text: string): NamedStatement | undefined {
  const sameLength = byLength.get(text.length);
  if (sameLength === undefined) return undefined;
  for (const named of sameLength) if (named.text === text) return named;
  return undefined;
}

/**
 * The name a statement is prepared under on each connection (node-postgres parses a named statement
 * once per connection, then only binds and executes it): derived from a hash of its text, so the same
 * text has the same name on every connection and in every process, and two texts never share one.
 * Undefined (sent unnamed, parsed every time) once the process has named `maxNames` texts, or for a
 * text longer than `maxNamedLength`: the server keeps every prepared statement until the connection
 * closes, and pg never forgets one, so the set must stay bounded.
 */
export function namedStatement(text: string): NamedStatement | undefined {
  const known = find(text);
  if (known !== undefined || text.length > maxNamedLength || count >= maxNames) return known;
  const named: NamedStatement = { text, name: hashName(text), generation: 0 };
  const sameLength = byLength.get(text.length);
  if (sameLength === undefined) byLength.set(text.length, [named]);
  else sameLength.push(named);
  count += 1;
  return named;
}

/**
 * Gives a named text a new name, so that every connection prepares it afresh. A statement prepared
 * before its result changed shape (a column added to a table it reads with `*`, by a migration
 * applied while this process runs) is refused by the server on every connection that holds it ("cached
 * plan must not change result type"); under the new name each connection plans it again once. The old
 * name stays on the connections that prepared it until they close: one more per such change.
 */
export function renameStatement(named: NamedStatement): void {
  named.generation += 1;
  // Longer than any first name (`sf_` and 22 characters): a renamed text never takes another's name.
  named.name = `${hashName(named.text)}_g${named.generation}`;
}

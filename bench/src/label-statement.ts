const identifier = String.raw`(?:"?\w+"?\.)?"?(\w+)"?`;
const updateTarget = new RegExp(String.raw`^update\s+${identifier}(?:\s+(?:as\s+)?(?!set\b)\w+)?\s+set\s+(.*)$`, 'is');
const insertTarget = new RegExp(String.raw`\binsert\s+into\s+${identifier}`, 'i');
const deleteTarget = new RegExp(String.raw`\bdelete\s+from\s+${identifier}`, 'i');
const selectSource = new RegExp(String.raw`\bfrom\s+${identifier}`, 'i');
const cteWrite = new RegExp(String.raw`\b(update|insert\s+into|delete\s+from)\s+${identifier}`, 'i');

/**
 * A short name for a SQL statement: its verb, the table it works on and, for an UPDATE, the columns
 * it sets (`UPDATE jobs SET locked_by,locked_until,deliveries`, `INSERT flow_events`,
 * `SELECT flow_runs`). The driver sees statements with their parameters and pg_stat_statements sees
 * them normalised, and both map to the same name, so the two views can be joined.
 */
export function labelStatement(sql: string): string {
  const text = sql
    .replace(/\/\*[\s\S]*?\*\//g, ' ')
    .replace(/--[^\n]*/g, ' ')
    .replace(/\s+/g, ' ')
    .trim();
  const verb = (/^\w+/.exec(text)?.[0] ?? '?').toUpperCase();
  switch (verb) {
    case 'UPDATE': {
      const m = updateTarget.exec(text);
      return m ? `UPDATE ${m[1]} SET ${setColumns(m[2] ?? '')}` : 'UPDATE';
    }
    case 'INSERT':
      return `INSERT ${insertTarget.exec(text)?.[1] ?? '?'}`;
    case 'DELETE':
      return `DELETE ${deleteTarget.exec(text)?.[1] ?? '?'}`;
    case 'SELECT': {
      const source = selectSource.exec(text)?.[1];
      const locking = /\bfor\s+(no\s+key\s+)?update\b/i.test(text) ? ' FOR UPDATE' : '';
      return source === undefined ? `SELECT ${text.slice(7, 40)}` : `SELECT ${source}${locking}`;
    }
    case 'WITH': {
      const m = cteWrite.exec(text);
      return m
        ? `WITH … ${(m[1] ?? '').split(' ')[0]?.toUpperCase()} ${m[2]}`
        : `WITH … ${selectSource.exec(text)?.[1] ?? ''}`;
    }
    case 'BEGIN':
    case 'START':
    case 'COMMIT':
    case 'END':
    case 'ROLLBACK':
      return verb;
    default:
      return text.slice(0, 40);
  }
}

/** The column names assigned in an UPDATE's SET list (up to WHERE / FROM / RETURNING). */
function setColumns(afterSet: string): string {
  const list = afterSet.split(/\s(?:where|from|returning)\s/i)[0] ?? '';
  const columns = [...list.matchAll(/(?:^|,)\s*"?(\w+)"?\s*=/g)].map((m) => m[1]);
  return columns.join(',') || '?';
}

/** Whether a statement opens, commits or rolls back a transaction. */
export function transactionControl(sql: string): 'begin' | 'commit' | 'rollback' | null {
  const verb = (/^\s*\w+/.exec(sql)?.[0] ?? '').trim().toUpperCase();
  if (verb === 'BEGIN' || (verb === 'START' && /^\s*start\s+transaction/i.test(sql))) return 'begin';
  if (verb === 'COMMIT' || verb === 'END') return 'commit';
  if (verb === 'ROLLBACK' && !/^\s*rollback\s+to\b/i.test(sql)) return 'rollback';
  return null;
}

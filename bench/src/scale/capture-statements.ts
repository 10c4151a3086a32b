import pg from 'pg';

/** A read statement as a client sent it: its text and parameter values. */
export interface CapturedStatement {
  text: string;
  values: unknown[];
}

type QueryMethod = (this: pg.Client, ...args: unknown[]) => unknown;

/** A planner setting the call makes for its own transaction (`set local jit = off`), not `statement_timeout`. */
const isPlannerSetting = (text: string) => /^\s*set local (?!statement_timeout)\w+ = \w+\s*$/i.test(text);

const isRead = (text: string) =>
  /^\s*(select|with)\b/i.test(text) && !/\bfor (update|share|no key update)\b/i.test(text);

/**
 * Records every SELECT sent through `pg.Client#query` in this process while `during` runs: the
 * control plane (started in-process) and Prisma's pg adapter share this `pg` under pnpm, so the
 * statements are exactly the ones a console call makes, with their parameters, ready to EXPLAIN.
 * `settings` are the planner settings the call's transaction made (`set local jit = off`), for the
 * replay to make as well: the statements are planned as the control plane has them planned.
 */
export async function captureStatements<T>(
  during: () => Promise<T>,
): Promise<{ value: T; statements: CapturedStatement[]; settings: string[] }> {
  const proto = pg.Client.prototype as unknown as { query: QueryMethod };
  const original = proto.query;
  const statements: CapturedStatement[] = [];
  const settings = new Set<string>();
  proto.query = function (this: pg.Client, ...args: unknown[]) {
    const [first, second] = args;
    const text = typeof first === 'string' ? first : (first as { text?: unknown } | null)?.text;
    const values = Array.isArray(second) ? second : (first as { values?: unknown } | null)?.values;
    if (typeof text === 'string' && isRead(text))
      statements.push({ text, values: Array.isArray(values) ? values : [] });
    if (typeof text === 'string' && isPlannerSetting(text)) settings.add(text.trim());
    return original.apply(this, args);
  };
  try {
    return { value: await during(), statements, settings: [...settings] };
  } finally {
    proto.query = original;
  }
}

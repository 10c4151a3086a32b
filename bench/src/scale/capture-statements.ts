import pg from 'pg';

/** A read statement as a client sent it: its text and parameter values. */
export interface CapturedStatement {
  text: string;
  values: unknown[];
}

type QueryMethod = (this: pg.Client, ...args: unknown[]) => unknown;

const isRead = (text: string) =>
  /^\s*(select|with)\b/i.test(text) && !/\bfor (update|share|no key update)\b/i.test(text);

/**
 * Records every SELECT sent through `pg.Client#query` in this process while `during` runs: the
 * control plane (started in-process) and Prisma's pg adapter share this `pg` under pnpm, so the
 * statements are exactly the ones a console call makes, with their parameters, ready to EXPLAIN.
 */
export async function captureStatements<T>(
  during: () => Promise<T>,
): Promise<{ value: T; statements: CapturedStatement[] }> {
  const proto = pg.Client.prototype as unknown as { query: QueryMethod };
  const original = proto.query;
  const statements: CapturedStatement[] = [];
  proto.query = function (this: pg.Client, ...args: unknown[]) {
    const [first, second] = args;
    const text = typeof first === 'string' ? first : (first as { text?: unknown } | null)?.text;
    const values = Array.isArray(second) ? second : (first as { values?: unknown } | null)?.values;
    if (typeof text === 'string' && isRead(text))
      statements.push({ text, values: Array.isArray(values) ? values : [] });
    return original.apply(this, args);
  };
  try {
    return { value: await during(), statements };
  } finally {
    proto.query = original;
  }
}

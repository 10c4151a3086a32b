import { Prisma } from '../generated/prisma/client.ts';

/**
 * The part of a Prisma client a store function that only sends raw SQL needs. Both a Prisma client
 * (or its interactive transaction) and the engine's own raw transaction ({@link rawDb}) are one, so
 * a function typed with it runs on either, and the compiler proves it calls no ORM model method:
 * the run's transactions send their statements without Prisma's runtime (ADR 0039).
 */
export interface RawDb {
  $queryRaw<T = unknown>(query: TemplateStringsArray | Prisma.Sql, ...values: unknown[]): Promise<T>;
  $executeRaw(query: TemplateStringsArray | Prisma.Sql, ...values: unknown[]): Promise<number>;
}

/** One statement as the driver takes it: `$1`… placeholders and their values. */
export interface RawStatement {
  text: string;
  values: unknown[];
}

/** What a driver answers to one statement: the rows as Prisma's raw path returns them, and the row count. */
export interface RawResult {
  rows: unknown[];
  rowCount: number;
}

/**
 * A {@link RawDb} that hands each statement to `send`. A tagged template is turned into a statement
 * the way Prisma does (`Prisma.sql`: nested `Prisma.Sql`, `Prisma.join` and `Prisma.raw` fragments
 * are flattened into the text and its values).
 */
export function rawDb(send: (statement: RawStatement) => Promise<RawResult>): RawDb {
  const statementOf = (query: TemplateStringsArray | Prisma.Sql, values: unknown[]): RawStatement => {
    const sql = Array.isArray(query) ? Prisma.sql(query, ...(values as Prisma.Sql[])) : (query as Prisma.Sql);
    return { text: sql.text, values: sql.values };
  };
  return {
    $queryRaw: async <T>(query: TemplateStringsArray | Prisma.Sql, ...values: unknown[]) =>
      (await send(statementOf(query, values))).rows as T,
    $executeRaw: async (query: TemplateStringsArray | Prisma.Sql, ...values: unknown[]) =>
      (await send(statementOf(query, values))).rowCount,
  };
}

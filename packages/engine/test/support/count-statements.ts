import type { Database, SqlSession } from '../../src/db/database.ts';
import type { RawStatement } from '../../src/db/raw-db.ts';

/** One statement the engine sent through the driver: its text, and whether it was inside a transaction. */
export interface SentStatement {
  text: string;
  inTransaction: boolean;
  /** Its parameters (a batched statement's first is the array of its runs, ADR 0045). */
  values: unknown[];
  /** The round it went in, when it went in one with others (`driver.statements`, ADR 0066): rounds numbered from 1. */
  round?: number;
}

/**
 * The database handle with its driver counted: every statement the run's work sends through it
 * (autocommitted ones, and each transaction's BEGIN, statements and COMMIT), in order. A structural
 * count at the driver, the same on PGlite and PostgreSQL; Prisma's own queries are not in it.
 */
export function countStatements(db: Database): { db: Database; sent: SentStatement[] } {
  const sent: SentStatement[] = [];
  let rounds = 0;
  const counted = (session: SqlSession, inTransaction: boolean): SqlSession => ({
    ...session,
    raw: (statement) => {
      sent.push({ text: statement.text.trim(), inTransaction, values: statement.values });
      return session.raw(statement);
    },
  });
  const driver = {
    ...counted(db.driver, false),
    statements: undefined,
    statement: (statement: RawStatement, limits?: Parameters<Database['driver']['statement']>[1]) => {
      sent.push({ text: statement.text.trim(), inTransaction: false, values: statement.values });
      return db.driver.statement(statement, limits);
    },
    ...(db.driver.statements === undefined
      ? {}
      : {
          statements: (
            statements: readonly RawStatement[],
            limits?: Parameters<Database['driver']['statement']>[1],
          ) => {
            const round = ++rounds;
            for (const statement of statements)
              sent.push({ text: statement.text.trim(), inTransaction: false, values: statement.values, round });
            return db.driver.statements!(statements, limits);
          },
        }),
    transaction: <T>(fn: (tx: SqlSession) => Promise<T>, limits?: Parameters<Database['driver']['transaction']>[1]) =>
      db.driver.transaction(async (tx) => {
        sent.push({ text: 'BEGIN', inTransaction: true, values: [] });
        const result = await fn(counted(tx, true));
        sent.push({ text: 'COMMIT', inTransaction: true, values: [] });
        return result;
      }, limits),
  };
  return { db: { ...db, driver }, sent };
}

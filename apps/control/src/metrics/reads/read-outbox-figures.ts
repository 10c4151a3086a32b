import { outboxLag, type Database, type OutboxLag } from '@sagaflow/engine';
import type { SqlReader } from './sql-reader.ts';

/**
 * The engine's own outbox figures (pending, dead, oldest pending age at `at`), read through `db`, which
 * may be an open snapshot transaction: outboxLag's one statement is a $queryRaw, which a transaction has.
 */
export function readOutboxFigures(db: SqlReader, at: Date): Promise<OutboxLag> {
  return outboxLag({ prisma: db as Database['prisma'] }, { clock: { now: () => at } });
}

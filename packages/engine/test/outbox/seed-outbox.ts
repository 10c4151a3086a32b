import { randomUUID } from 'node:crypto';
import type { Database } from '../../src/db/database.ts';
import type { Json } from '../../src/definitions/define-action.ts';

export interface SeedOutbox {
  messageId?: string;
  sourceId?: string;
  destination?: string;
  type?: string;
  payload?: Json;
  createdAt?: Date;
}

/** Writes outbox rows the way a process's transaction does: in one transaction, in order. */
export async function seedOutbox(db: Database, rows: SeedOutbox[]): Promise<string[]> {
  return db.prisma.$transaction(async (tx) => {
    const ids: string[] = [];
    for (const row of rows) {
      const messageId = row.messageId ?? randomUUID();
      await tx.outboxMessage.create({
        data: {
          message_id: messageId,
          source_kind: 'process',
          source_id: row.sourceId ?? 'source-1',
          type: row.type ?? 'ReserveInventory',
          destination: row.destination ?? 'inventory',
          payload: row.payload ?? { n: ids.length },
          ...(row.createdAt ? { created_at: row.createdAt } : {}),
        },
      });
      ids.push(messageId);
    }
    return ids;
  });
}

export async function outboxRow(db: Database, messageId: string) {
  return db.prisma.outboxMessage.findUniqueOrThrow({ where: { message_id: messageId } });
}

/** Each test in a file starts from an empty outbox (the publisher claims whatever is due). */
export async function clearOutbox(db: Database): Promise<void> {
  await db.prisma.$executeRaw`delete from "sagaflow"."outbox"`;
  await db.prisma.$executeRaw`delete from "sagaflow"."inbox"`;
}

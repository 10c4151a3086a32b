import type { Database } from '@sagaflow/engine';

/**
 * Everything recorded about one process instance, in one REPEATABLE READ snapshot: the instance
 * row (state, failure record, kept payload), every transition, its timeouts, the outbox rows it
 * wrote, the inbox records of the messages it consumed, and the repairs aimed at it or its outbox rows. Null when no
 * instance has this id.
 */
export async function readInstanceHistory(db: Pick<Database, 'prisma'>, instanceId: string) {
  return db.prisma.$transaction(
    async (tx) => {
      const instance = await tx.sagaInstance.findUnique({ where: { id: instanceId } });
      if (!instance) return null;
      const outbox = await tx.outboxMessage.findMany({
        where: { source_kind: 'process', source_id: instanceId },
        orderBy: { seq: 'asc' },
      });
      return {
        kind: 'instance' as const,
        instance,
        transitions: await tx.processTransition.findMany({
          where: { instance_id: instanceId },
          orderBy: { id: 'asc' },
        }),
        timeouts: await tx.processTimeout.findMany({
          where: { instance_id: instanceId },
          orderBy: [{ created_at: 'asc' }, { id: 'asc' }],
        }),
        outbox,
        inbox: await tx.inboxMessage.findMany({ where: { instance_id: instanceId }, orderBy: { received_at: 'asc' } }),
        // The instance's own repairs, and the requeues of the outbox rows it wrote (ADR 0104).
        repairs: await tx.repairCommand.findMany({
          where: {
            OR: [
              { target_type: 'instance', target_id: instanceId },
              { target_type: 'outbox', target_id: { in: outbox.map((o) => o.id) } },
            ],
          },
          orderBy: [{ at: 'asc' }, { id: 'asc' }],
        }),
      };
    },
    { isolationLevel: 'RepeatableRead', timeout: 30_000 },
  );
}

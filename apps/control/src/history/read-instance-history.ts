import type { Database } from '@sagaflow/engine';
import { tableSection, type HistoryDocument } from './history-pages.ts';

type Db = Pick<Database, 'prisma'>;

/**
 * Everything recorded about one process instance, as a download streams it (ADR 0115): the instance
 * row (state, failure record, kept payload), then every transition, its timeouts, the outbox rows it
 * wrote, the inbox records of the messages it consumed, and the repairs aimed at it or its outbox
 * rows, each read in keyset pages of `historyPageRows` in its own order. Null when no instance has
 * this id.
 */
export async function readInstanceHistory(db: Db, instanceId: string): Promise<HistoryDocument | null> {
  const p = db.prisma;
  const instance = await p.sagaInstance.findUnique({ where: { id: instanceId } });
  if (!instance) return null;
  const byInstance = { instance_id: instanceId };
  return {
    kind: 'instance',
    head: instance,
    stillThere: async () =>
      (await p.sagaInstance.findUnique({ where: { id: instanceId }, select: { id: true } })) !== null,
    sections: [
      tableSection(p, {
        key: 'transitions',
        table: 'process_transitions',
        where: `t.instance_id = $1::uuid`,
        owner: instanceId,
        order: [['id', 'bigint']],
        read: (after: { id: bigint } | undefined, take) =>
          p.processTransition.findMany({
            where: { ...byInstance, ...(after ? { id: { gt: after.id } } : {}) },
            orderBy: { id: 'asc' },
            take,
          }),
      }),
      tableSection(p, {
        key: 'timeouts',
        table: 'process_timeouts',
        where: `t.instance_id = $1::uuid`,
        owner: instanceId,
        order: [
          ['created_at', 'timestamptz'],
          ['id', 'uuid'],
        ],
        read: (after: { created_at: Date; id: string } | undefined, take) =>
          p.processTimeout.findMany({
            where: {
              ...byInstance,
              ...(after
                ? {
                    OR: [
                      { created_at: { gt: after.created_at } },
                      { created_at: after.created_at, id: { gt: after.id } },
                    ],
                  }
                : {}),
            },
            orderBy: [{ created_at: 'asc' }, { id: 'asc' }],
            take,
          }),
      }),
      tableSection(p, {
        key: 'outbox',
        table: 'outbox',
        where: `t.source_kind = 'process' and t.source_id = $1::text`,
        owner: instanceId,
        order: [['seq', 'bigint']],
        read: (after: { seq: bigint } | undefined, take) =>
          p.outboxMessage.findMany({
            where: { source_kind: 'process', source_id: instanceId, ...(after ? { seq: { gt: after.seq } } : {}) },
            orderBy: { seq: 'asc' },
            take,
          }),
      }),
      tableSection(p, {
        key: 'inbox',
        table: 'inbox',
        where: `t.instance_id = $1::uuid`,
        owner: instanceId,
        order: [
          ['received_at', 'timestamptz'],
          ['consumer', 'text'],
          ['message_id', 'text'],
        ],
        read: (after: { received_at: Date; consumer: string; message_id: string } | undefined, take) =>
          p.inboxMessage.findMany({
            where: {
              ...byInstance,
              ...(after
                ? {
                    OR: [
                      { received_at: { gt: after.received_at } },
                      { received_at: after.received_at, consumer: { gt: after.consumer } },
                      {
                        received_at: after.received_at,
                        consumer: after.consumer,
                        message_id: { gt: after.message_id },
                      },
                    ],
                  }
                : {}),
            },
            orderBy: [{ received_at: 'asc' }, { consumer: 'asc' }, { message_id: 'asc' }],
            take,
          }),
      }),
      // The instance's own repairs, and the requeues of the outbox rows it wrote (ADR 0104). The
      // outbox rows' ids are matched in SQL, so no list of them is held: each page's repair ids are
      // found first, then those rows read whole.
      tableSection(p, {
        key: 'repairs',
        table: 'repair_commands',
        where: `(t.target_type = 'instance' and t.target_id = $1::text)
             or (t.target_type = 'outbox' and t.target_id in (
                   select o.id::text from "sagaflow"."outbox" o
                    where o.source_kind = 'process' and o.source_id = $1::text))`,
        owner: instanceId,
        order: [
          ['at', 'timestamptz'],
          ['id', 'uuid'],
        ],
        read: async (after: { at: Date; id: string } | undefined, take) => {
          const ids = await p.$queryRaw<{ id: string }[]>`
            select r.id::text as id
              from "sagaflow"."repair_commands" r
             where ((r.target_type = 'instance' and r.target_id = ${instanceId})
                 or (r.target_type = 'outbox' and r.target_id in (
                       select o.id::text from "sagaflow"."outbox" o
                        where o.source_kind = 'process' and o.source_id = ${instanceId})))
               and (${after === undefined}::boolean
                 or (r.at, r.id) > (${after?.at ?? null}::timestamptz, ${after?.id ?? null}::uuid))
             order by r.at, r.id
             limit ${take}::int`;
          if (ids.length === 0) return [];
          return p.repairCommand.findMany({
            where: { id: { in: ids.map((r) => r.id) } },
            orderBy: [{ at: 'asc' }, { id: 'asc' }],
          });
        },
      }),
    ],
  };
}

import type { Database } from '@sagaflow/engine';
import { keysetPages, tableSection, type HistoryDocument } from './history-pages.ts';

type Db = Pick<Database, 'prisma'>;

/**
 * Everything recorded about one run, as a download streams it (ADR 0115): the run row, then its
 * steps, compensations, events (flow_events), signals, timers, anomalies, the repairs aimed at it or
 * its steps, the outbox rows it wrote, and its child runs' ids, each read in keyset pages of
 * `historyPageRows` in its own order. Nothing is cut: this is the download a support ticket attaches.
 * Null when no run has this id.
 */
export async function readRunHistory(db: Db, runId: string): Promise<HistoryDocument | null> {
  const p = db.prisma;
  const run = await p.flowRun.findUnique({ where: { id: runId } });
  if (!run) return null;
  const byRun = { run_id: runId };
  return {
    kind: 'run',
    head: run,
    stillThere: async () => (await p.flowRun.findUnique({ where: { id: runId }, select: { id: true } })) !== null,
    sections: [
      tableSection(p, {
        key: 'steps',
        table: 'action_runs',
        where: `t.run_id = $1::uuid`,
        owner: runId,
        order: [['sequence', 'int']],
        read: (after: { sequence: number } | undefined, take) =>
          p.actionRun.findMany({
            where: { ...byRun, ...(after ? { sequence: { gt: after.sequence } } : {}) },
            orderBy: { sequence: 'asc' },
            take,
          }),
      }),
      tableSection(p, {
        key: 'compensations',
        table: 'compensation_runs',
        where: `t.run_id = $1::uuid`,
        owner: runId,
        order: [
          ['rollback_level', 'int'],
          ['ordinal', 'int'],
        ],
        read: (after: { rollback_level: number; ordinal: number } | undefined, take) =>
          p.compensationRun.findMany({
            where: {
              ...byRun,
              ...(after
                ? {
                    OR: [
                      { rollback_level: { gt: after.rollback_level } },
                      { rollback_level: after.rollback_level, ordinal: { gt: after.ordinal } },
                    ],
                  }
                : {}),
            },
            orderBy: [{ rollback_level: 'asc' }, { ordinal: 'asc' }],
            take,
          }),
      }),
      tableSection(p, {
        key: 'events',
        table: 'flow_events',
        where: `t.run_id = $1::uuid`,
        owner: runId,
        order: [['id', 'bigint']],
        read: (after: { id: bigint } | undefined, take) =>
          p.flowEvent.findMany({
            where: { ...byRun, ...(after ? { id: { gt: after.id } } : {}) },
            orderBy: { id: 'asc' },
            take,
          }),
      }),
      tableSection(p, {
        key: 'signals',
        table: 'signals',
        where: `t.run_id = $1::uuid`,
        owner: runId,
        order: [['seq', 'bigint']],
        read: (after: { seq: bigint } | undefined, take) =>
          p.signal.findMany({
            where: { ...byRun, ...(after ? { seq: { gt: after.seq } } : {}) },
            orderBy: { seq: 'asc' },
            take,
          }),
      }),
      tableSection(p, {
        key: 'timers',
        table: 'timers',
        where: `t.run_id = $1::uuid`,
        owner: runId,
        order: [['sequence', 'int']],
        read: (after: { sequence: number } | undefined, take) =>
          p.timer.findMany({
            where: { ...byRun, ...(after ? { sequence: { gt: after.sequence } } : {}) },
            orderBy: { sequence: 'asc' },
            take,
          }),
      }),
      tableSection(p, {
        key: 'anomalies',
        table: 'anomaly_log',
        where: `t.run_id = $1::uuid`,
        owner: runId,
        order: [
          ['at', 'timestamptz'],
          ['id', 'bigint'],
        ],
        read: (after: { at: Date; id: bigint } | undefined, take) =>
          p.anomalyLog.findMany({
            where: { ...byRun, ...(after ? afterAtId(after) : {}) },
            orderBy: [{ at: 'asc' }, { id: 'asc' }],
            take,
          }),
      }),
      tableSection(p, {
        key: 'repairs',
        table: 'repair_commands',
        where: `(t.target_type = 'run' and t.target_id = $1::text) or (t.target_type = 'step' and t.target_id like $1::text || '#%')`,
        owner: runId,
        order: [
          ['at', 'timestamptz'],
          ['id', 'uuid'],
        ],
        read: (after: { at: Date; id: string } | undefined, take) =>
          p.repairCommand.findMany({
            where: {
              AND: [
                {
                  OR: [
                    { target_type: 'run', target_id: runId },
                    { target_type: 'step', target_id: { startsWith: `${runId}#` } },
                  ],
                },
                ...(after ? [afterAtId(after)] : []),
              ],
            },
            orderBy: [{ at: 'asc' }, { id: 'asc' }],
            take,
          }),
      }),
      tableSection(p, {
        key: 'outbox',
        table: 'outbox',
        where: `t.source_kind = 'flow' and t.source_id = $1::text`,
        owner: runId,
        order: [['seq', 'bigint']],
        read: (after: { seq: bigint } | undefined, take) =>
          p.outboxMessage.findMany({
            where: { source_kind: 'flow', source_id: runId, ...(after ? { seq: { gt: after.seq } } : {}) },
            orderBy: { seq: 'asc' },
            take,
          }),
      }),
      {
        key: 'childRunIds',
        pages: async function* () {
          const pages = keysetPages((after: { id: string; parent_sequence: number | null } | undefined, take) =>
            p.flowRun.findMany({
              where: {
                parent_run_id: runId,
                // A child always has its parent's step (both are written together); nulls sort last.
                ...(after === undefined
                  ? {}
                  : after.parent_sequence === null
                    ? { parent_sequence: null, id: { gt: after.id } }
                    : {
                        OR: [
                          { parent_sequence: { gt: after.parent_sequence } },
                          { parent_sequence: null },
                          { parent_sequence: after.parent_sequence, id: { gt: after.id } },
                        ],
                      }),
              },
              select: { id: true, parent_sequence: true },
              orderBy: [{ parent_sequence: 'asc' }, { id: 'asc' }],
              take,
            }),
          );
          for await (const page of pages) yield page.map((c) => c.id);
        },
      },
    ],
  };
}

/** The rows after `after` in (at, id) order. */
export function afterAtId<K extends string | bigint>(after: { at: Date; id: K }) {
  return { OR: [{ at: { gt: after.at } }, { at: after.at, id: { gt: after.id } }] };
}

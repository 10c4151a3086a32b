import type { BulkDraft } from '@/repairs/bulk-draft';

/** An outbox row as a page shows it: what a requeue is drafted against. */
export interface OutboxRowShown {
  id: string;
  messageId: string;
  type: string;
  destination: string;
  status: string;
  attempts: number;
  /** What emitted it, when the page lists rows of many sources: an instance's row links to its page. */
  sourceKind?: string;
  sourceId?: string;
}

/**
 * One `outbox.requeue` bulk (ADR 0104) over the ticked rows, each drafted against the status and
 * attempts the page shows for it. A ticked row that is not Dead any more (requeued by someone else,
 * being sent again, or delivered) has nothing to requeue and one that left the page cannot be drafted
 * against what it shows: both are left out, counted, with why (as the runs and instances bulks do).
 */
export function outboxRequeueBulk(
  rows: readonly OutboxRowShown[],
  selected: ReadonlySet<string>,
  key: string,
): BulkDraft {
  const chosen = rows.filter((o) => selected.has(o.id));
  const dead = chosen.filter((o) => o.status === 'Dead');
  const notDead = chosen.length - dead.length;
  const gone = selected.size - chosen.length;
  const statuses = [...new Set(chosen.filter((o) => o.status !== 'Dead').map((o) => o.status))].join(' or ');
  return {
    kind: 'outbox.requeue',
    title: 'Requeue',
    params: {},
    idempotencyKey: key,
    noun: 'outbox row',
    items: dead.map((o) => ({
      target: { outboxId: o.id },
      expected: { status: o.status, attempts: o.attempts },
      id: o.id,
      ...(o.sourceId && o.sourceKind === 'process' ? { href: `/instances/${o.sourceId}#outbox` } : {}),
      label: `${o.type} to ${o.destination}, message ${o.messageId}`,
    })),
    leftOut: {
      count: notDead + gone,
      why: [
        ...(notDead > 0
          ? [`${notDead} ${notDead === 1 ? 'is' : 'are'} not Dead any more (now ${statuses}): nothing to requeue`]
          : []),
        ...(gone > 0 ? [`${gone} left this list after ${gone === 1 ? 'it was' : 'they were'} ticked`] : []),
      ].join('; '),
    },
  };
}

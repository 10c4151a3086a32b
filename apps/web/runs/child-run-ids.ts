import type { FlowEventRow } from '@/trpc/api-types';

/**
 * Child run ids by the parent's step sequence. The step row does not carry the child's id, but the
 * parent's `child.started` event does (`data.child`), and the run page already has the events.
 */
export function childRunIds(events: readonly FlowEventRow[]): Map<number, string> {
  const ids = new Map<number, string>();
  for (const event of events) {
    if (event.type !== 'child.started' || event.sequence === null) continue;
    const data: unknown = event.data;
    if (typeof data === 'object' && data !== null && 'child' in data && typeof data.child === 'string')
      ids.set(event.sequence, data.child);
  }
  return ids;
}

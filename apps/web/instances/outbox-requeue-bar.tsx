'use client';

import type { BulkDraft } from '@/repairs/bulk-draft';
import { newKey } from '@/repairs/repair-draft-types';
import { SelectionBar } from '@/ui/selection-bar';
import { outboxRequeueBulk, type OutboxRowShown } from './outbox-requeue-bulk';

/**
 * The selection bar over ticked outbox rows (operators only; the caller checks the role): how many are
 * ticked, and one button that drafts them as one `outbox.requeue` bulk for the bulk draft panel,
 * rows that are not Dead any more left out with why.
 */
export function OutboxRequeueBar({
  rows,
  selected,
  onSelect,
  onDraft,
}: {
  rows: readonly OutboxRowShown[];
  selected: ReadonlySet<string>;
  onSelect: (next: ReadonlySet<string>) => void;
  onDraft: (draft: BulkDraft) => void;
}) {
  const n = selected.size;
  return (
    <SelectionBar count={n} onClear={() => onSelect(new Set())} noun="outbox row">
      <button
        type="button"
        data-testid="bulk-preview"
        onClick={() => onDraft(outboxRequeueBulk(rows, selected, newKey()))}
      >
        Preview requeue for {n} outbox row{n === 1 ? '' : 's'}
      </button>
    </SelectionBar>
  );
}

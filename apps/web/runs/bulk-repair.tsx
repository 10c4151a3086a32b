'use client';

import { useId, useState } from 'react';
import { useRoleAllows } from '@/auth/use-session';
import type { BulkDraft } from '@/repairs/bulk-draft';
import { newKey } from '@/repairs/repair-draft-types';
import type { RunSummary } from '@/trpc/api-types';
import { isOpenRun } from './run-statuses';
import { repairLabels } from './run-repairs';

const bulkKinds = ['run.kick', 'run.cancel', 'run.expire', 'run.terminate'] as const;

/**
 * The bulk repair picker in the runs list's selection bar (operators only): choose the command and
 * draft it over the selected runs, each against the status the list shows for it.
 */
export function BulkRepairPicker({
  runs,
  selected,
  onDraft,
}: {
  runs: RunSummary[];
  selected: ReadonlySet<string>;
  onDraft: (draft: BulkDraft) => void;
}) {
  const canRepair = useRoleAllows('operator');
  const id = useId();
  const [kind, setKind] = useState<string>('run.kick');
  if (!canRepair) return null;
  const draftNow = () => {
    const chosen = runs.filter((r) => selected.has(r.id));
    onDraft({
      kind,
      title: repairLabels[kind] ?? kind,
      params: {},
      idempotencyKey: newKey(),
      noun: 'run',
      items: chosen
        .filter((r) => isOpenRun(r.status))
        .map((r) => ({
          target: { runId: r.id },
          expected: { runStatus: r.status },
          id: r.id,
          href: `/runs/${r.id}`,
          label: r.id.slice(0, 8),
        })),
      leftOut: leftOutOf(chosen, selected.size),
    });
  };
  return (
    <>
      <label htmlFor={`${id}-kind`}>Bulk repair</label>
      <select id={`${id}-kind`} data-testid="bulk-kind" value={kind} onChange={(e) => setKind(e.target.value)}>
        {bulkKinds.map((k) => (
          <option key={k} value={k}>
            {repairLabels[k]}
          </option>
        ))}
      </select>
      <button type="button" data-testid="bulk-preview" onClick={draftNow}>
        Preview for {selected.size} run{selected.size === 1 ? '' : 's'}
      </button>
    </>
  );
}

/**
 * The selected runs the bulk leaves out, and why: finished ones (never changed), and ticked ones that
 * are no longer in the list (they changed and left its filter since: review 33), which the draft
 * cannot draft against a status it does not show.
 */
function leftOutOf(chosen: RunSummary[], selectedCount: number): BulkDraft['leftOut'] {
  const finished = chosen.filter((r) => !isOpenRun(r.status)).length;
  const gone = selectedCount - chosen.length;
  const why = [
    ...(finished > 0 ? ['a finished run is never changed'] : []),
    ...(gone > 0 ? [`${gone} changed and left this list after it was ticked`] : []),
  ];
  return { count: finished + gone, why: why.join('; ') || 'a finished run is never changed' };
}

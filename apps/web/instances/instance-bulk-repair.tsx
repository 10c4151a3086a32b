'use client';

import { useId, useState } from 'react';
import { useRoleAllows } from '@/auth/use-session';
import type { BulkDraft } from '@/repairs/bulk-draft';
import { newKey } from '@/repairs/repair-draft-types';
import type { InstanceSummary } from './instance-types';

/** The bulk repairs an instance list offers: release each quarantined instance, retrying or skipping. */
const releases = {
  retry: 'Release: retry the message',
  skip: 'Release: skip the message',
} as const;

/**
 * The bulk repair picker in the instances list's selection bar (operators only): release the selected
 * quarantined instances, each against the state and version the list shows for it. Selected
 * instances that are not quarantined have nothing to release: they are left out, and counted.
 */
export function InstanceBulkRepairPicker({
  instances,
  selected,
  onDraft,
}: {
  instances: InstanceSummary[];
  selected: ReadonlySet<string>;
  onDraft: (draft: BulkDraft) => void;
}) {
  const canRepair = useRoleAllows('operator');
  const id = useId();
  const [mode, setMode] = useState<keyof typeof releases>('retry');
  if (!canRepair) return null;
  const draftNow = () => {
    const chosen = instances.filter((i) => selected.has(i.id));
    const quarantined = chosen.filter((i) => i.status === 'QUARANTINED');
    onDraft({
      kind: 'instance.release',
      title: releases[mode],
      params: { mode },
      idempotencyKey: newKey(),
      noun: 'instance',
      items: quarantined.map((i) => ({
        target: { instanceId: i.id },
        expected: { state: i.currentState, version: i.version },
        id: i.id,
        href: `/instances/${i.id}`,
        label: i.correlationKey,
      })),
      leftOut: {
        count: selected.size - quarantined.length,
        why: [
          ...(chosen.length > quarantined.length ? ['not quarantined: nothing to release'] : []),
          ...(selected.size > chosen.length
            ? [`${selected.size - chosen.length} changed and left this list after it was ticked`]
            : []),
        ].join('; '),
      },
    });
  };
  return (
    <>
      <label htmlFor={`${id}-mode`}>Bulk repair</label>
      <select
        id={`${id}-mode`}
        data-testid="bulk-kind"
        value={mode}
        onChange={(e) => setMode(e.target.value as keyof typeof releases)}
      >
        {Object.entries(releases).map(([value, label]) => (
          <option key={value} value={value}>
            {label}
          </option>
        ))}
      </select>
      <button type="button" data-testid="bulk-preview" onClick={draftNow}>
        Preview for {selected.size} instance{selected.size === 1 ? '' : 's'}
      </button>
    </>
  );
}

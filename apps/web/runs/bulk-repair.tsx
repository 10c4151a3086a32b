'use client';

import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import Link from 'next/link';
import { useId, useState } from 'react';
import { useRoleAllows } from '@/auth/use-session';
import { newKey } from '@/repairs/repair-draft-types';
import { apiErrorInfo } from '@/trpc/api-error';
import type { RunSummary } from '@/trpc/api-types';
import { useTRPC } from '@/trpc/trpc-context';
import { isOpenRun } from './run-statuses';
import { repairLabels } from './run-repairs';
import { ScrollBox } from '@/ui/scroll-box';

const bulkKinds = ['run.kick', 'run.cancel', 'run.expire', 'run.terminate'] as const;

export interface BulkDraft {
  kind: string;
  idempotencyKey: string;
  /** Each run with the status the list showed when the bulk repair was drafted. */
  items: { target: { runId: string }; expected: { runStatus: string } }[];
  /** Selected runs already finished: a finished run is never changed, so they are left out. */
  leftOut: string[];
}

type PreviewItem =
  | { notFound: string }
  | { expectedHolds: boolean; applicable: boolean; blockers: string[]; actual: { runStatus?: string } };

/**
 * The bulk repair picker in the selection bar (operators only): choose the command and draft it
 * over the selected runs, each against the status the list shows for it.
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
      idempotencyKey: newKey(),
      items: chosen
        .filter((r) => isOpenRun(r.status))
        .map((r) => ({ target: { runId: r.id }, expected: { runStatus: r.status } })),
      leftOut: chosen.filter((r) => !isOpenRun(r.status)).map((r) => r.id),
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
 * A drafted bulk repair: its preview per run against the status each showed, one reason, apply; then
 * each run's outcome. Each run is its own repair with its own expected status and audit row, so one
 * that moved is rejected alone. Kept on screen while the list moves on (the runs may leave its filter).
 */
export function BulkDraftPanel({ draft, onClose }: { draft: BulkDraft; onClose: () => void }) {
  const trpc = useTRPC();
  const queryClient = useQueryClient();
  const [reason, setReason] = useState('');
  const base = { kind: draft.kind, idempotencyKey: draft.idempotencyKey, items: draft.items };
  const preview = useQuery(
    trpc.repairs.previewBulk.queryOptions(
      { ...base, reason: 'preview' },
      { retry: false, staleTime: Infinity, enabled: draft.items.length > 0 },
    ),
  );
  const apply = useMutation(
    trpc.repairs.applyBulk.mutationOptions({
      onSettled: () => queryClient.invalidateQueries(trpc.runs.page.pathFilter()),
    }),
  );
  const previews = preview.data as PreviewItem[] | undefined;
  // A bulk the approval policy holds answers awaiting_approval (ADR 0020): nothing applied yet.
  const waiting = apply.data && 'approvalId' in apply.data ? apply.data : undefined;
  const done = apply.data && 'items' in apply.data ? apply.data : undefined;
  const outcomes = done?.items;
  return (
    <div className="repair-draft panel bulk-draft" data-testid="bulk-draft">
      <p>
        <strong>{repairLabels[draft.kind]}</strong> for {draft.items.length} run{draft.items.length === 1 ? '' : 's'}
        {draft.leftOut.length > 0
          ? `; ${draft.leftOut.length} finished run(s) left out (a finished run is never changed)`
          : ''}
        .
      </p>
      {preview.isError ? (
        <p className="notice notice-bad" role="alert">
          Could not preview: {apiErrorInfo(preview.error).message}
        </p>
      ) : null}
      <ScrollBox label="Bulk repair items">
        <table className="table" data-testid="bulk-items">
          <thead>
            <tr>
              <th scope="col">Run</th>
              <th scope="col">Drafted against</th>
              <th scope="col">Preview</th>
              <th scope="col">Outcome</th>
            </tr>
          </thead>
          <tbody>
            {draft.items.map((item, i) => {
              const p = previews?.[i];
              const o = outcomes?.[i];
              return (
                <tr
                  key={item.target.runId}
                  data-testid="bulk-item"
                  data-run-id={item.target.runId}
                  data-outcome={o?.outcome ?? ''}
                >
                  <td>
                    <Link href={`/runs/${item.target.runId}`} className="mono">
                      {item.target.runId.slice(0, 8)}
                    </Link>
                  </td>
                  <td>{item.expected.runStatus}</td>
                  <td data-testid="bulk-item-preview">
                    {!p
                      ? '…'
                      : 'notFound' in p
                        ? 'not found'
                        : !p.expectedHolds
                          ? `changed: now ${p.actual.runStatus ?? '?'}`
                          : p.applicable
                            ? 'would apply'
                            : `cannot apply: ${p.blockers.join('; ')}`}
                  </td>
                  <td data-testid="bulk-item-outcome">
                    {o ? (
                      <>
                        <span className={`badge badge-${o.outcome === 'applied' ? 'ok' : 'bad'}`}>{o.outcome}</span>
                        {o.message ? <span className="muted"> {o.message}</span> : null}
                      </>
                    ) : null}
                  </td>
                </tr>
              );
            })}
          </tbody>
        </table>
      </ScrollBox>
      {waiting ? (
        <p className="notice notice-warn" role="status" data-testid="repair-awaiting-approval">
          Sent for approval: a second operator must approve this bulk before any of it is applied.{' '}
          <Link href={`/approvals?id=${encodeURIComponent(waiting.approvalId)}`}>See it in the approvals queue</Link>
        </p>
      ) : done ? (
        <p className="notice notice-ok" role="status" data-testid="bulk-applied">
          Applied to {done.applied} of {draft.items.length}.
        </p>
      ) : (
        <form
          onSubmit={(e) => {
            e.preventDefault();
            apply.mutate({ ...base, reason: reason.trim() });
          }}
        >
          <label>
            Reason (required, kept in each run’s audit row){' '}
            <input
              data-testid="bulk-reason"
              required
              maxLength={1000}
              value={reason}
              onChange={(e) => setReason(e.target.value)}
            />
          </label>{' '}
          <button
            type="submit"
            className="primary"
            data-testid="bulk-apply"
            disabled={apply.isPending || reason.trim() === '' || draft.items.length === 0 || !previews}
          >
            {apply.isPending ? 'Applying…' : `Apply to ${draft.items.length}`}
          </button>{' '}
          <button type="button" onClick={onClose}>
            Close
          </button>
        </form>
      )}
      {apply.isError ? (
        <p className="notice notice-bad" role="alert">
          Not applied: {apiErrorInfo(apply.error).message}
        </p>
      ) : null}
    </div>
  );
}

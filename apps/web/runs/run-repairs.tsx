'use client';

import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { TRPCClientError } from '@trpc/client';
import Link from 'next/link';
import { useState } from 'react';
import { useRoleAllows } from '@/auth/use-session';
import type { RunDetail } from '@/trpc/api-types';
import { apiErrorInfo } from '@/trpc/api-error';
import { useTRPC } from '@/trpc/trpc-context';

/** The repairs this panel drafts: those whose target is the run itself and that take no parameters. */
const runRepairs = ['run.kick', 'run.cancel', 'run.expire', 'run.terminate'] as const;
type RunRepair = (typeof runRepairs)[number];
const labels: Record<RunRepair, string> = {
  'run.kick': 'Kick',
  'run.cancel': 'Cancel (with compensation)',
  'run.expire': 'Expire now',
  'run.terminate': 'Terminate (no compensation)',
};

interface Draft {
  kind: RunRepair;
  target: { runId: string };
  /** The status the page showed when the operator chose the repair: apply is refused if it moved. */
  expected: { runStatus: string };
  idempotencyKey: string;
}

/** "The run changed: now X" from a 409's `data.repair.current`, or null for any other error. */
function conflictStatus(error: unknown): string | null {
  if (!(error instanceof TRPCClientError)) return null;
  const repair = (error.data as { repair?: { current?: { runStatus?: unknown } } } | undefined)?.repair;
  const status = repair?.current?.runStatus;
  return apiErrorInfo(error).httpStatus === 409 && typeof status === 'string' ? status : null;
}

/**
 * The run's safe repairs (by its status and stuck reason) as buttons, for operators only. A click
 * previews what the repair would do, asks for a reason, and applies it against the status shown.
 */
export function RunRepairs({ run }: { run: RunDetail['run'] }) {
  const canRepair = useRoleAllows('operator');
  const [draft, setDraft] = useState<Draft | null>(null);
  const kinds = runRepairs.filter((k) => (run.safeRepairs as readonly string[]).includes(k));
  // An open draft stays while the run moves on (polling), so its outcome or conflict is still shown.
  if (!canRepair || (kinds.length === 0 && draft === null)) return null;
  return (
    <section id="repairs" data-testid="run-repairs">
      <h2>Repairs</h2>
      <div className="repair-buttons">
        {kinds.map((kind) => (
          <button
            key={kind}
            type="button"
            data-testid={`repair-${kind}`}
            onClick={() =>
              setDraft({
                kind,
                target: { runId: run.id },
                expected: { runStatus: run.status },
                idempotencyKey: crypto.randomUUID(),
              })
            }
          >
            {labels[kind]}
          </button>
        ))}
      </div>
      {draft ? <RepairDraft key={draft.idempotencyKey} draft={draft} onClose={() => setDraft(null)} /> : null}
    </section>
  );
}

function RepairDraft({ draft, onClose }: { draft: Draft; onClose: () => void }) {
  const trpc = useTRPC();
  const queryClient = useQueryClient();
  const [reason, setReason] = useState('');
  const preview = useQuery(
    trpc.repairs.preview.queryOptions(
      // A preview writes nothing, so it needs no reason yet; the engine still requires the field.
      { ...draft, reason: 'preview' },
      { retry: false, staleTime: Infinity },
    ),
  );
  const apply = useMutation(
    trpc.repairs.applyOne.mutationOptions({
      onSettled: () => queryClient.invalidateQueries(trpc.runs.get.pathFilter()),
    }),
  );
  const changedTo = apply.isError ? conflictStatus(apply.error) : null;
  const effects = preview.data?.effects;
  return (
    <div className="repair-draft" data-testid="repair-draft">
      <p>
        <strong>{labels[draft.kind]}</strong>, drafted against status <code>{draft.expected.runStatus}</code>.
      </p>
      {preview.isPending ? <p className="muted">Previewing…</p> : null}
      {preview.isError ? (
        <p className="notice notice-bad" role="alert">
          Could not preview: {apiErrorInfo(preview.error).message}
        </p>
      ) : null}
      {preview.data ? (
        <ul data-testid="repair-preview">
          {effects?.transitions.map((t) => (
            <li key={`t-${t.subject}`}>
              {t.subject}: {t.from} → {t.to}
            </li>
          ))}
          {effects?.compensations.map((c) => (
            <li key={`c-${c.actionSequence}`}>
              compensates step {c.actionSequence} ({c.name})
            </li>
          ))}
          {effects?.jobs.map((j) => (
            <li key={`j-${j.availableAt}`}>sends a fresh job for the run</li>
          ))}
          {effects?.notes.map((n) => (
            <li key={`n-${n}`}>{n}</li>
          ))}
          {preview.data.blockers.map((b) => (
            <li key={`b-${b}`} className="notice-bad">
              cannot apply: {b}
            </li>
          ))}
          {preview.data.expectedHolds ? null : <li className="notice-bad">the run has changed since it was shown</li>}
        </ul>
      ) : null}
      {apply.isSuccess && apply.data.status === 'awaiting_approval' ? (
        <p className="notice notice-warn" role="status" data-testid="repair-awaiting-approval">
          Sent for approval: the approval policy holds {labels[draft.kind].toLowerCase()} for a second operator. Nothing
          is done until one approves it.{' '}
          <Link href={`/approvals?id=${apply.data.approvalId}#approval-${apply.data.approvalId}`}>
            See it in the approvals queue
          </Link>
        </p>
      ) : apply.isSuccess ? (
        <p className="notice notice-ok" role="status" data-testid="repair-applied">
          Applied{apply.data.replayed ? ' (already applied with this key)' : ''}.
        </p>
      ) : (
        <form
          onSubmit={(e) => {
            e.preventDefault();
            apply.mutate({ ...draft, reason: reason.trim() });
          }}
        >
          <label>
            Reason{' '}
            <input
              data-testid="repair-reason"
              value={reason}
              required
              maxLength={1000}
              onChange={(e) => setReason(e.target.value)}
            />
          </label>{' '}
          <button
            type="submit"
            className="primary"
            data-testid="repair-apply"
            disabled={apply.isPending || reason.trim() === '' || !preview.data?.applicable}
          >
            {apply.isPending ? 'Applying…' : 'Apply'}
          </button>{' '}
          <button type="button" onClick={onClose}>
            Close
          </button>
        </form>
      )}
      {changedTo !== null ? (
        <p className="notice notice-bad" role="alert" data-testid="repair-conflict">
          The run changed: now {changedTo}. Nothing was done; choose the repair again to draft it against the run as it
          is.
        </p>
      ) : apply.isError ? (
        <p className="notice notice-bad" role="alert">
          Not applied: {apiErrorInfo(apply.error).message}
        </p>
      ) : null}
    </div>
  );
}

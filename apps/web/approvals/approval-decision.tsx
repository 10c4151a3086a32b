'use client';

import { useMutation, useQueryClient } from '@tanstack/react-query';
import { useRef, useState } from 'react';
import type { ApprovalRow } from '@/trpc/api-types';
import { apiErrorInfo } from '@/trpc/api-error';
import { useTRPC } from '@/trpc/trpc-context';

/** What became of this page's decision, kept by the queue beside the approval: done, or why not. */
export interface DecisionOutcome {
  ok: boolean;
  text: string;
}

/**
 * Approve, or reject with a reason: for a pending approval shown to an operator who did not draft it
 * (the server refuses the drafter and lower roles anyway).
 */
export function ApprovalDecision({
  approval,
  onOutcome,
}: {
  approval: ApprovalRow;
  onOutcome: (o: DecisionOutcome) => void;
}) {
  const trpc = useTRPC();
  const queryClient = useQueryClient();
  const [rejecting, setRejecting] = useState(false);
  const [reason, setReason] = useState('');
  // One decision per click (review 42): a double click calls onClick twice before React re-renders the
  // button disabled, so the first click marks the decision sent at once; only an error lets it be sent again.
  const sending = useRef(false);
  const rejectButton = useRef<HTMLButtonElement>(null);
  const send = (run: () => void) => {
    if (sending.current) return;
    sending.current = true;
    run();
  };
  const resend = () => {
    sending.current = false;
  };
  const refresh = () =>
    Promise.all([
      queryClient.invalidateQueries(trpc.approvals.list.pathFilter()),
      queryClient.invalidateQueries(trpc.runs.get.pathFilter()),
    ]);
  const failed = (error: unknown) =>
    onOutcome({
      ok: false,
      text: `${apiErrorInfo(error).httpStatus === 409 ? 'Not applied: ' : ''}${apiErrorInfo(error).message}`,
    });
  const approve = useMutation(
    trpc.approvals.approve.mutationOptions({
      onSuccess: (a) =>
        onOutcome({ ok: true, text: `Approved: ${a.command} on ${a.target.type} ${a.target.id} is ${a.status}.` }),
      onError: (error) => {
        resend();
        failed(error);
      },
      onSettled: refresh,
    }),
  );
  const reject = useMutation(
    trpc.approvals.reject.mutationOptions({
      onSuccess: (a) =>
        onOutcome({
          ok: true,
          text: `Rejected: ${a.command} on ${a.target.type} ${a.target.id}; nothing was applied.`,
        }),
      onError: (error) => {
        resend();
        failed(error);
      },
      onSettled: refresh,
    }),
  );
  const busy = approve.isPending || reject.isPending;
  return (
    <div className="approval-decision">
      {rejecting ? (
        <form
          onSubmit={(e) => {
            e.preventDefault();
            send(() => reject.mutate({ id: approval.id, reason: reason.trim() }));
          }}
        >
          <label>
            Why reject it?{' '}
            {/* Focus goes to the reason the form asks for (review 42), not back to the top of the page. */}
            <input
              autoFocus
              data-testid="approval-reject-reason"
              value={reason}
              required
              maxLength={1000}
              onChange={(e) => setReason(e.target.value)}
            />
          </label>{' '}
          <button type="submit" disabled={busy || reason.trim() === ''} data-testid="approval-reject-confirm">
            Reject
          </button>{' '}
          <button
            type="button"
            onClick={() => {
              setRejecting(false);
              // Back to the button that opened the form, so the keyboard user is where it was.
              requestAnimationFrame(() => rejectButton.current?.focus());
            }}
          >
            Back
          </button>
        </form>
      ) : (
        <p className="actions">
          <button
            type="button"
            className="primary"
            disabled={busy}
            data-testid="approval-approve"
            onClick={() => send(() => approve.mutate({ id: approval.id }))}
          >
            {approve.isPending ? 'Applying…' : 'Approve and apply'}
          </button>
          <button
            ref={rejectButton}
            type="button"
            disabled={busy}
            data-testid="approval-reject"
            onClick={() => setRejecting(true)}
          >
            Reject…
          </button>
        </p>
      )}
    </div>
  );
}

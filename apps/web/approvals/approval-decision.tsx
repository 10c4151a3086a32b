'use client';

import { useMutation, useQueryClient } from '@tanstack/react-query';
import { useState } from 'react';
import type { ApprovalRow } from '@/trpc/api-types';
import { apiErrorInfo } from '@/trpc/api-error';
import { useTRPC } from '@/trpc/trpc-context';

/**
 * Approve, or reject with a reason: for a pending approval shown to an operator who did not draft it
 * (the server refuses the drafter and lower roles anyway).
 */
export function ApprovalDecision({ approval }: { approval: ApprovalRow }) {
  const trpc = useTRPC();
  const queryClient = useQueryClient();
  const [rejecting, setRejecting] = useState(false);
  const [reason, setReason] = useState('');
  const refresh = () =>
    Promise.all([
      queryClient.invalidateQueries(trpc.approvals.list.pathFilter()),
      queryClient.invalidateQueries(trpc.runs.get.pathFilter()),
    ]);
  const approve = useMutation(trpc.approvals.approve.mutationOptions({ onSettled: refresh }));
  const reject = useMutation(trpc.approvals.reject.mutationOptions({ onSettled: refresh }));
  const error = approve.error ?? reject.error;
  const busy = approve.isPending || reject.isPending;
  return (
    <div className="approval-decision">
      {rejecting ? (
        <form
          onSubmit={(e) => {
            e.preventDefault();
            reject.mutate({ id: approval.id, reason: reason.trim() });
          }}
        >
          <label>
            Why reject it?{' '}
            <input
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
          <button type="button" onClick={() => setRejecting(false)}>
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
            onClick={() => approve.mutate({ id: approval.id })}
          >
            {approve.isPending ? 'Applying…' : 'Approve and apply'}
          </button>
          <button type="button" disabled={busy} data-testid="approval-reject" onClick={() => setRejecting(true)}>
            Reject…
          </button>
        </p>
      )}
      {error ? (
        <p className="notice notice-bad" role="alert" data-testid="approval-error">
          {apiErrorInfo(error).httpStatus === 409 ? 'Not applied: ' : ''}
          {apiErrorInfo(error).message}
        </p>
      ) : null}
    </div>
  );
}

'use client';

import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import Link from 'next/link';
import { useEffect, useRef, useState } from 'react';
import { apiErrorInfo } from '@/trpc/api-error';
import { useTRPC } from '@/trpc/trpc-context';
import { ScrollBox } from '@/ui/scroll-box';
import { bulkBody, type BulkDraft } from './bulk-draft';
import { expectedText } from './expected-text';
import { DecidedDraftNotice } from './decided-draft-notice';
import { decidedDraftOf } from './repair-outcome';
import { RestoredNotice } from './restored-notice';
import { useRestoredKeyUse } from './use-key-use';

type PreviewItem =
  | { notFound: string }
  | { expectedHolds: boolean; applicable: boolean; blockers: string[]; actual: Record<string, string | number> };

const plural = (n: number, noun: string) => `${n} ${noun}${n === 1 ? '' : 's'}`;

function previewText(p: PreviewItem | undefined): string {
  if (!p) return '…';
  if ('notFound' in p) return 'not found';
  if (!p.expectedHolds) return `changed: now ${expectedText(p.actual) || '?'}`;
  return p.applicable ? 'would apply' : `cannot apply: ${p.blockers.join('; ')}`;
}

/**
 * A drafted bulk repair (runs, instances or outbox rows): its preview per item against the state each showed, one
 * reason, apply; then each item's outcome. Each item is its own repair with its own expected state
 * and audit row, so one that moved is rejected alone. Kept on screen while the list moves on (the
 * targets may leave its filter).
 */
export function BulkDraftPanel({
  draft,
  onClose,
  onApplied,
  initialReason = '',
  onReasonChange,
  onSent,
  restored = false,
}: {
  draft: BulkDraft;
  onClose: () => void;
  /** Called once the bulk was sent (applied or held for approval): the list clears its selection. */
  onApplied: () => void;
  /** The reason as typed before (a draft kept over an ended session, use-kept-draft.ts). */
  initialReason?: string;
  onReasonChange?: (reason: string) => void;
  /** The bulk went through (applied, held for approval, or found decided): nothing is left to keep. */
  onSent?: () => void;
  /** Offered again after the session ended while it was open: it says so, and its reason takes focus. */
  restored?: boolean;
}) {
  const trpc = useTRPC();
  const queryClient = useQueryClient();
  const [reason, setReason] = useState(initialReason);
  const reasonInput = useRef<HTMLInputElement>(null);
  useEffect(() => {
    if (restored) reasonInput.current?.focus();
  }, [restored]);
  // One submit per draft: a second Enter before the form re-rendered does not send the bulk again.
  const sending = useRef(false);
  const preview = useQuery(
    trpc.repairs.previewBulk.queryOptions(bulkBody(draft, 'preview'), {
      retry: false,
      staleTime: Infinity,
      enabled: draft.items.length > 0,
    }),
  );
  const apply = useMutation(
    trpc.repairs.applyBulk.mutationOptions({
      onSuccess: () => {
        onSent?.();
        onApplied();
      },
      onSettled: async () => {
        await queryClient.invalidateQueries(trpc.runs.page.pathFilter());
        await queryClient.invalidateQueries(trpc.instances.page.pathFilter());
        await queryClient.invalidateQueries(trpc.instances.get.pathFilter());
        await queryClient.invalidateQueries(trpc.outbox.pathFilter());
      },
    }),
  );
  // A restored bulk says nothing about itself until its key's use is known (a sibling tab may have sent it).
  const keyUse = useRestoredKeyUse(
    restored,
    draft.idempotencyKey,
    onSent,
    draft.items.map((i) => i.id),
  );
  const previews = preview.data as PreviewItem[] | undefined;
  // A bulk the approval policy holds answers awaiting_approval (ADR 0020): nothing applied yet.
  const decided = decidedDraftOf(apply.data);
  const waiting =
    apply.data && 'approvalId' in apply.data && apply.data.status === 'awaiting_approval' ? apply.data : undefined;
  const done = apply.data && 'items' in apply.data ? apply.data : undefined;
  const outcomes = done?.items;
  const { count: leftOut, why } = draft.leftOut;
  return (
    <div className="repair-draft panel bulk-draft" data-testid="bulk-draft">
      <p>
        <strong>{draft.title}</strong> for {plural(draft.items.length, draft.noun)}
        {leftOut > 0 ? `; ${plural(leftOut, draft.noun)} left out (${why})` : ''}.
      </p>
      {restored && apply.isIdle ? (
        <RestoredNotice keyUse={keyUse} what="this bulk draft">
          Your session ended while this bulk draft was open: none of it was applied. Here it is as you left it; check
          what it would do now, then apply it or close it.
        </RestoredNotice>
      ) : null}
      {preview.isError ? (
        <p className="notice notice-bad" role="alert">
          Could not preview: {apiErrorInfo(preview.error).message}
        </p>
      ) : null}
      <ScrollBox label="Bulk repair items">
        <table className="table" data-testid="bulk-items">
          <thead>
            <tr>
              <th scope="col">{draft.noun.charAt(0).toUpperCase() + draft.noun.slice(1)}</th>
              <th scope="col">Drafted against</th>
              <th scope="col">Preview</th>
              <th scope="col">Outcome</th>
            </tr>
          </thead>
          <tbody>
            {draft.items.map((item, i) => {
              const o = outcomes?.[i];
              return (
                <tr key={item.id} data-testid="bulk-item" data-target-id={item.id} data-outcome={o?.outcome ?? ''}>
                  <td>
                    {item.href ? (
                      <Link href={item.href} className="mono">
                        {item.label}
                      </Link>
                    ) : (
                      <span className="mono">{item.label}</span>
                    )}
                  </td>
                  <td>{expectedText(item.expected)}</td>
                  <td data-testid="bulk-item-preview">{previewText(previews?.[i])}</td>
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
      ) : decided ? (
        <DecidedDraftNotice decided={decided} />
      ) : done ? (
        <p className="notice notice-ok" role="status" data-testid="bulk-applied">
          Applied to {done.applied} of {draft.items.length}.
        </p>
      ) : (
        <form
          onSubmit={(e) => {
            e.preventDefault();
            if (sending.current) return;
            sending.current = true;
            apply.mutate(bulkBody(draft, reason.trim()), {
              onError: () => {
                sending.current = false;
              },
            });
          }}
        >
          <label>
            Reason (required, kept in each {draft.noun}’s audit row){' '}
            <input
              ref={reasonInput}
              data-testid="bulk-reason"
              required
              maxLength={1000}
              value={reason}
              onChange={(e) => {
                setReason(e.target.value);
                onReasonChange?.(e.target.value);
              }}
            />
          </label>{' '}
          <button
            type="submit"
            className="primary"
            data-testid="bulk-apply"
            disabled={
              apply.isPending ||
              reason.trim() === '' ||
              draft.items.length === 0 ||
              !previews ||
              keyUse.checking ||
              keyUse.used !== null
            }
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

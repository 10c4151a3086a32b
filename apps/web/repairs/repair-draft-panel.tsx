'use client';

import { useMutation, useQuery } from '@tanstack/react-query';
import Link from 'next/link';
import { useCallback, useEffect, useRef, useState } from 'react';
import { apiErrorInfo } from '@/trpc/api-error';
import { useTRPC } from '@/trpc/trpc-context';
import { describeCurrent, redraftAgainst, type CurrentState } from './redraft';
import { commandBody, type DraftCommand } from './repair-draft-types';
import { RepairEffectsList, type Effects } from './repair-effects-list';
import { DecidedDraftNotice } from './decided-draft-notice';
import { approvalIdOf, awaitsApproval, decidedDraftOf, repairRejection } from './repair-outcome';
import { expectedText } from './expected-text';
import { RestoredNotice } from './restored-notice';
import { useRestoredKeyUse } from './use-key-use';

/**
 * One drafted repair: what it would do now (preview), a required reason, apply; then its result,
 * or the rejection with the state now and a one-click redraft against it. The draft stays on screen
 * while the target moves on (the page polls), so what happened to it is still shown.
 */
const previewEveryMs = 3000;

export function RepairDraftPanel({
  draft,
  title,
  noun,
  onRedraft,
  onClose,
  onApplied,
  initialReason = '',
  onReasonChange,
  onSent,
  restored = false,
}: {
  draft: DraftCommand;
  title: string;
  /** What it acts on, for "the run changed: now …". */
  noun: 'run' | 'step' | 'instance' | 'outbox row';
  onRedraft: (next: DraftCommand) => void;
  onClose: () => void;
  onApplied: () => void;
  /** The reason as typed before (a draft kept over an ended session). */
  initialReason?: string;
  onReasonChange?: (reason: string) => void;
  /** The command went through (applied, or sent for approval, or found decided): nothing is left to keep. */
  onSent?: () => void;
  /** Offered again after the session ended while it was open (kept-draft.ts): it says so. */
  restored?: boolean;
}) {
  const trpc = useTRPC();
  const [reason, setReason] = useState(initialReason);
  // Focus (review 42): opening a draft puts focus in its first field, the reason; its outcome takes focus
  // when the form it replaces goes (a focused control removed drops focus to the page's body).
  const reasonInput = useRef<HTMLInputElement>(null);
  useEffect(() => {
    reasonInput.current?.focus();
  }, []);
  const focusOnMount = useCallback((el: HTMLElement | null) => el?.focus(), []);
  // A second Enter before the first submit re-rendered the form must not send it again (review 33): the
  // idempotency key would keep it to one effect, but the answer shown would be the replay's.
  const sending = useRef(false);
  const apply = useMutation(trpc.repairs.applyOne.mutationOptions({ onSuccess: onSent, onSettled: onApplied }));
  const preview = useQuery(
    trpc.repairs.preview.queryOptions(
      // A preview writes nothing, so it needs no reason yet; the engine still requires the field.
      commandBody(draft, 'preview') as { kind: string },
      // Previewed again while the draft is open (review 33): a target that moves underneath (the run
      // finishes) shows as changed, and Apply is disabled, before anyone presses it.
      { retry: false, staleTime: Infinity, refetchInterval: apply.isIdle ? previewEveryMs : false },
    ),
  );
  // A restored draft says nothing about itself until its key's use is known (a sibling tab may have applied it).
  const keyUse = useRestoredKeyUse(restored, draft.idempotencyKey, onSent);
  const rejection = apply.isError ? repairRejection(apply.error) : null;
  const previewed = preview.data as
    | { expectedHolds: boolean; applicable: boolean; blockers: string[]; effects: Effects; actual: CurrentState }
    | undefined;
  const changedNow = previewed && !previewed.expectedHolds ? previewed.actual : null;
  const redraftFrom = rejection?.current ?? changedNow;
  const next = redraftFrom ? redraftAgainst(draft, redraftFrom) : null;
  const result = apply.data as { replayed?: boolean; effects?: Effects; afterCommit?: string[] } | undefined;
  return (
    <div className="repair-draft panel" data-testid="repair-draft" data-kind={draft.kind}>
      <p>
        <strong>{title}</strong>, drafted against{' '}
        <code data-testid="draft-expected">{expectedText(draft.expected)}</code>.
      </p>
      {restored && apply.isIdle ? (
        <RestoredNotice keyUse={keyUse} what="this draft">
          Your session ended while this draft was open: it was not applied. Here it is as you left it; check what it
          would do now, then apply it or close it.
        </RestoredNotice>
      ) : null}
      {preview.isPending ? <p className="muted">Previewing…</p> : null}
      {preview.isError ? (
        <p className="notice notice-bad" role="alert" data-testid="repair-preview-error">
          Could not preview: {apiErrorInfo(preview.error).message}
        </p>
      ) : null}
      {previewed ? (
        <>
          <h3 className="small-heading">What it would do now</h3>
          <RepairEffectsList effects={previewed.effects} testId="repair-preview" />
          {previewed.blockers.length > 0 ? (
            <ul className="notice notice-bad" data-testid="repair-blockers">
              {previewed.blockers.map((b) => (
                <li key={b}>cannot apply: {b}</li>
              ))}
            </ul>
          ) : null}
          {changedNow ? (
            <p className="notice notice-warn" data-testid="repair-stale">
              It has changed since it was drafted: now {describeCurrent(changedNow)}.
            </p>
          ) : null}
        </>
      ) : null}
      {apply.isSuccess ? (
        awaitsApproval(apply.data) ? (
          <p
            className="notice notice-warn"
            role="status"
            data-testid="repair-awaiting-approval"
            tabIndex={-1}
            ref={focusOnMount}
          >
            Sent for approval: a second operator must approve it before it is applied.{' '}
            <Link href={`/approvals?id=${approvalIdOf(apply.data)}#approval-${approvalIdOf(apply.data)}`}>
              See it in the approvals queue
            </Link>
          </p>
        ) : decidedDraftOf(apply.data) ? (
          <div tabIndex={-1} ref={focusOnMount}>
            <DecidedDraftNotice decided={decidedDraftOf(apply.data)!} />
          </div>
        ) : (
          <div className="notice notice-ok" role="status" data-testid="repair-applied" tabIndex={-1} ref={focusOnMount}>
            <p>Applied{result?.replayed ? ' (already applied with this key)' : ''}.</p>
            {result?.effects ? <RepairEffectsList effects={result.effects} testId="repair-result" /> : null}
            {result?.afterCommit?.length ? (
              <ul data-testid="repair-after-commit">
                {result.afterCommit.map((n) => (
                  <li key={n}>Then: {n}</li>
                ))}
              </ul>
            ) : null}
          </div>
        )
      ) : (
        <form
          onSubmit={(e) => {
            e.preventDefault();
            if (sending.current) return;
            sending.current = true;
            apply.mutate(commandBody(draft, reason.trim()) as { kind: string }, {
              onError: () => {
                sending.current = false;
              },
            });
          }}
        >
          <label>
            Reason (required, kept in the audit trail){' '}
            <input
              ref={reasonInput}
              data-testid="repair-reason"
              value={reason}
              required
              maxLength={1000}
              onChange={(e) => {
                setReason(e.target.value);
                onReasonChange?.(e.target.value);
              }}
            />
          </label>{' '}
          <button
            type="submit"
            className="primary"
            data-testid="repair-apply"
            disabled={
              apply.isPending ||
              reason.trim() === '' ||
              !previewed?.applicable ||
              keyUse.checking ||
              keyUse.used !== null
            }
          >
            {apply.isPending ? 'Applying…' : 'Apply'}
          </button>{' '}
          <button type="button" onClick={onClose}>
            Close
          </button>
        </form>
      )}
      {rejection ? (
        <div className="notice notice-bad" role="alert" data-testid="repair-conflict" tabIndex={-1} ref={focusOnMount}>
          <p>
            {rejection.kind === 'changed'
              ? `The ${noun} changed: now ${describeCurrent(rejection.current)} (it was drafted against ${expectedText(draft.expected)}). Nothing was done.`
              : `Rejected: ${rejection.blockers.join('; ') || rejection.message}. Nothing was done.`}
          </p>
        </div>
      ) : apply.isError ? (
        <p className="notice notice-bad" role="alert" data-testid="repair-error" tabIndex={-1} ref={focusOnMount}>
          Not applied: {apiErrorInfo(apply.error).message}
        </p>
      ) : null}
      {next && !apply.isSuccess ? (
        <button type="button" data-testid="repair-redraft" onClick={() => onRedraft(next)}>
          Redraft against current state ({describeCurrent(redraftFrom)})
        </button>
      ) : redraftFrom && !apply.isSuccess ? (
        <p className="muted" data-testid="repair-no-redraft">
          It cannot be redrafted: it is {describeCurrent(redraftFrom)}.
        </p>
      ) : null}
    </div>
  );
}

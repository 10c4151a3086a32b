'use client';

import { usePathname } from 'next/navigation';
import { useCallback, useEffect, useRef, useState } from 'react';
import { useSession } from '@/auth/use-session';
import type { BulkDraft } from './bulk-draft';
import { dropKeptDraft, keepDraft, keptDraftKey, readKeptDraft } from './kept-draft';
import type { DraftCommand } from './repair-draft-types';

/** A single repair's draft as the run, instance and outbox sections hold it. */
export interface OneDraft {
  command: DraftCommand;
  title: string;
}

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null;

/** A kept single draft, well formed. */
export function isOneDraft(d: unknown): d is OneDraft {
  if (!isObject(d) || typeof d.title !== 'string' || !isObject(d.command)) return false;
  const c = d.command;
  return (
    typeof c.kind === 'string' &&
    typeof c.idempotencyKey === 'string' &&
    isObject(c.target) &&
    isObject(c.expected) &&
    isObject(c.params)
  );
}

/** A kept bulk draft, well formed. */
export function isBulkDraft(d: unknown): d is BulkDraft {
  return (
    isObject(d) &&
    typeof d.kind === 'string' &&
    typeof d.title === 'string' &&
    typeof d.idempotencyKey === 'string' &&
    typeof d.noun === 'string' &&
    isObject(d.params) &&
    isObject(d.leftOut) &&
    Array.isArray(d.items) &&
    d.items.every((i) => isObject(i) && typeof i.id === 'string' && isObject(i.target) && isObject(i.expected))
  );
}

export interface OpenDraft<T> {
  draft: T;
  /** Offered again after the session ended while it was open: the panel says so, with its reason as typed. */
  restored: boolean;
  /** The reason to start from: as typed before for a restored draft, empty otherwise. */
  initialReason: string;
}

/**
 * The open draft of one section of a page (`slot`: "repairs", "outbox", "bulk"…), kept in this tab while
 * it is open and unapplied (kept-draft.ts) so a session that ends under it does not lose it (ADR 0117
 * decision 2, ADR 0120). The rules, the same for every section:
 * - opening or redrafting keeps it (a redraft is a new draft, with a new idempotency key and no reason);
 *   each keystroke of its reason is kept;
 * - once the operator is known, a draft kept when the session ended comes back to the operator who drafted
 *   it (`restored`), never applied by itself: its panel previews it again and applies it only on Apply,
 *   with the idempotency key it had; any other kept draft (the page was left with it open, or reloaded,
 *   or another operator's) is dropped;
 * - closing it, or its command going through (applied, sent for approval, found decided), drops it;
 * - leaving the page by a link drops it; only the bounce to sign-in marks it to be offered again.
 * `belongs` checks a kept draft is one this section can show (well formed, about what the page shows).
 */
export function useKeptDraft<T>(slot: string, belongs: (draft: unknown) => draft is T) {
  const key = keptDraftKey(usePathname(), slot);
  const me = useSession().data?.operator.name;
  const [open, setOpen] = useState<OpenDraft<T> | null>(null);
  const current = useRef<T | null>(null);
  const reason = useRef('');
  const belongsRef = useRef(belongs);
  belongsRef.current = belongs;
  const write = useCallback(() => {
    if (current.current !== null && me) {
      keepDraft(key, { draft: current.current, reason: reason.current, operator: me });
    } else dropKeptDraft(key);
  }, [key, me]);

  const checked = useRef(false);
  useEffect(() => {
    if (!me || checked.current) return;
    checked.current = true;
    const kept = readKeptDraft(key);
    if (kept?.sessionEnded && kept.operator === me && belongsRef.current(kept.draft)) {
      current.current = kept.draft;
      reason.current = kept.reason;
      setOpen({ draft: kept.draft, restored: true, initialReason: kept.reason });
      keepDraft(key, { ...kept, sessionEnded: false });
    } else if (kept) dropKeptDraft(key);
  }, [me, key]);

  useEffect(
    () => () => {
      if (!readKeptDraft(key)?.sessionEnded) dropKeptDraft(key);
    },
    [key],
  );

  return {
    open,
    /** Opens (or redrafts to) `draft`, with an empty reason, and keeps it. */
    start: (draft: T) => {
      current.current = draft;
      reason.current = '';
      setOpen({ draft, restored: false, initialReason: '' });
      write();
    },
    /** Closes the draft: nothing is kept. */
    close: () => {
      current.current = null;
      setOpen(null);
      write();
    },
    /** The reason as typed, kept with the draft. */
    reasonChanged: (r: string) => {
      reason.current = r;
      write();
    },
    /** Its command went through: the panel stays to show the outcome, but nothing is left to keep. */
    sent: () => {
      current.current = null;
      write();
    },
  };
}

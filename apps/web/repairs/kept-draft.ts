import type { DraftCommand } from './repair-draft-types';

/**
 * A repair draft kept in this tab's sessionStorage while it is open and unapplied (review 42), so that
 * a session ending under it does not lose it: the sign-in page says it was not applied, and its page
 * offers it again, with its reason as typed, after signing in again. Never applied by itself.
 *
 * Keyed by the page of what it repairs (`/runs/<id>`: one open draft per page); the value names the
 * command. Only a draft marked `sessionEnded` (by the bounce to sign-in) is offered again, and only to
 * the operator who drafted it; any other kept draft is stale (the page was left) and dropped.
 */
export interface KeptDraft {
  command: DraftCommand;
  title: string;
  reason: string;
  /** Who drafted it: it is offered again to that operator only. */
  operator: string;
  /** Set as the page is replaced by sign-in because the session ended. */
  sessionEnded?: boolean;
}

const prefix = 'sagaflow.kept-draft:';

function storage(): Storage | null {
  try {
    return typeof window === 'undefined' ? null : window.sessionStorage;
  } catch {
    return null; // storage disabled: nothing is kept
  }
}

/** Keeps (or replaces) the open draft of the page at `path`. */
export function keepDraft(path: string, kept: KeptDraft): void {
  try {
    storage()?.setItem(prefix + path, JSON.stringify(kept));
  } catch {
    // full or disabled: the draft is simply not kept
  }
}

/** The draft kept for the page at `path`, if any (and well formed). */
export function readKeptDraft(path: string): KeptDraft | null {
  const text = storage()?.getItem(prefix + path);
  if (!text) return null;
  try {
    const kept = JSON.parse(text) as Partial<KeptDraft>;
    const c = kept.command;
    if (
      !c ||
      typeof c.kind !== 'string' ||
      typeof c.idempotencyKey !== 'string' ||
      typeof c.target !== 'object' ||
      typeof c.expected !== 'object' ||
      typeof kept.title !== 'string' ||
      typeof kept.reason !== 'string' ||
      typeof kept.operator !== 'string'
    )
      return null;
    return kept as KeptDraft;
  } catch {
    return null;
  }
}

export function dropKeptDraft(path: string): void {
  storage()?.removeItem(prefix + path);
}

/**
 * Called as the page at `path` is replaced by sign-in because the session ended: marks its open draft,
 * if one is kept, to be offered again. True when there was one (the sign-in page says so).
 */
export function markKeptDraftSessionEnded(path: string): boolean {
  const kept = readKeptDraft(path);
  if (!kept) return false;
  keepDraft(path, { ...kept, sessionEnded: true });
  return true;
}

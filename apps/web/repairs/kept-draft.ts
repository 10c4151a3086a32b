/**
 * Repair drafts kept in this tab's sessionStorage while they are open and unapplied (review 42, ADR 0117,
 * ADR 0120), so that a session ending under one does not lose it: the sign-in page says whose draft was
 * not applied, and its page offers it again, with its reason as typed, after that operator signs in
 * again. Never applied by itself. The React side is `use-kept-draft.ts`; this file is the storage.
 *
 * Keyed by the page the draft is open on and the section that holds it (`/runs/<id>#repairs`,
 * `/instances/<id>#outbox`, `/runs#bulk`): one open draft per section. The value is the draft as its
 * section shapes it (a command and its title, or a bulk draft), the reason as typed and its operator.
 * Only a draft marked `sessionEnded` (by the bounce to sign-in) is offered again, and only to the
 * operator who drafted it; any other kept draft is stale (the page was left) and dropped.
 */
export interface KeptDraft<T = unknown> {
  draft: T;
  reason: string;
  /** Who drafted it (the operator's sign-in name): it is offered again to that operator only. */
  operator: string;
  /** Set as the page is replaced by sign-in because the session ended. */
  sessionEnded?: boolean;
}

const prefix = 'sagaflow.kept-draft:';

/** The storage key of the draft open in section `slot` of the page at `path`. */
export const keptDraftKey = (path: string, slot: string) => `${path}#${slot}`;

function storage(): Storage | null {
  try {
    return typeof window === 'undefined' ? null : window.sessionStorage;
  } catch {
    return null; // storage disabled: nothing is kept
  }
}

/** Every key this module keeps in the tab (without the prefix). */
function keptKeys(): string[] {
  const s = storage();
  if (!s) return [];
  const keys: string[] = [];
  for (let i = 0; i < s.length; i++) {
    const k = s.key(i);
    if (k?.startsWith(prefix)) keys.push(k.slice(prefix.length));
  }
  return keys;
}

/** Keeps (or replaces) the open draft at `key`. */
export function keepDraft(key: string, kept: KeptDraft): void {
  try {
    storage()?.setItem(prefix + key, JSON.stringify(kept));
  } catch {
    // full or disabled: the draft is simply not kept
  }
}

/** The draft kept at `key`, if any and well formed (its `draft` is checked by the section that reads it). */
export function readKeptDraft(key: string): KeptDraft | null {
  const text = storage()?.getItem(prefix + key);
  if (!text) return null;
  try {
    const kept = JSON.parse(text) as Partial<KeptDraft>;
    if (
      typeof kept !== 'object' ||
      kept === null ||
      typeof kept.draft !== 'object' ||
      kept.draft === null ||
      typeof kept.reason !== 'string' ||
      typeof kept.operator !== 'string'
    )
      return null;
    return kept as KeptDraft;
  } catch {
    return null;
  }
}

export function dropKeptDraft(key: string): void {
  storage()?.removeItem(prefix + key);
}

/**
 * Called as the page at `path` is replaced by sign-in because the session ended: marks every draft kept
 * on it (one per section) to be offered again. True when there was one (the sign-in page says so).
 */
export function markKeptDraftsSessionEnded(path: string): boolean {
  let marked = false;
  for (const key of keptKeys()) {
    if (!key.startsWith(`${path}#`)) continue;
    const kept = readKeptDraft(key);
    if (!kept) continue;
    keepDraft(key, { ...kept, sessionEnded: true });
    marked = true;
  }
  return marked;
}

/** Whose drafts, ended with their session, this tab keeps to offer again (sorted, each once). */
export function keptDraftOwners(): string[] {
  const owners = new Set<string>();
  for (const key of keptKeys()) {
    const kept = readKeptDraft(key);
    if (kept?.sessionEnded) owners.add(kept.operator);
  }
  return [...owners].sort();
}

/**
 * Called when `operator` has signed in on this tab: the drafts another operator left here are dropped
 * (ADR 0120). They were never sent, so nothing on the server changes; their reasons, that operator's
 * words, do not stay in a tab someone else now uses.
 */
export function dropKeptDraftsNotOf(operator: string): void {
  for (const key of keptKeys()) {
    if (readKeptDraft(key)?.operator !== operator) dropKeptDraft(key);
  }
}

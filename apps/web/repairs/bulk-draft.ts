import type { DraftCommand } from './repair-draft-types';

/** One target of a bulk repair, drafted against the state its list row showed. */
export interface BulkItem {
  target: DraftCommand['target'];
  expected: DraftCommand['expected'];
  /** The target's id (a run's, an instance's or an outbox row's), its page if it has one, and how the panel names it. */
  id: string;
  href?: string;
  label: string;
}

/** A bulk repair drafted from a list: one command over many targets, each with its own expected state. */
export interface BulkDraft {
  kind: string;
  /** What the command is, in words ("Kick", "Release: skip the message"). */
  title: string;
  /** The command's own parameters, the same for every item (e.g. a release's mode). */
  params: Record<string, unknown>;
  idempotencyKey: string;
  /** "run", "instance" or "outbox row": how the panel counts and heads the items. */
  noun: string;
  items: BulkItem[];
  /** Selected targets the command can never take (a finished run, an instance not quarantined, a row not Dead), and why. */
  leftOut: { count: number; why: string };
}

/** The bulk command as the API takes it (previewBulk, applyBulk). */
export const bulkBody = (draft: BulkDraft, reason: string) => ({
  ...draft.params,
  kind: draft.kind,
  idempotencyKey: draft.idempotencyKey,
  reason,
  items: draft.items.map(({ target, expected }) => ({ target, expected })),
});

import type { KeyUse } from '../trpc/api-types';
import { formatDateTime } from '../ui/format-time';

export type { KeyUse };

/** What a kept draft's key was used for, in words, and where to see it (ADR 0120 addendum). */
export interface KeyUseText {
  /** Whether the draft's command took effect (wholly or, for a bulk, on some items). */
  applied: boolean;
  text: string;
  link: { href: string; label: string };
}

const again = 'Nothing was done; draft it again to try once more.';

function auditLink(d: KeyUse['decisions'][number]) {
  const target = d.targetType === 'step' ? (d.runId ?? d.targetId) : d.targetId;
  const q = new URLSearchParams({ source: 'repair', actor: d.actor, command: d.command, target });
  return { href: `/audit?${q.toString()}`, label: 'See it in the audit trail' };
}

function approvalLink(id: string) {
  return {
    href: `/approvals?id=${encodeURIComponent(id)}#approval-${encodeURIComponent(id)}`,
    label: 'See it in the approvals queue',
  };
}

/**
 * A key's use described for the draft that holds it, or null when the key was never used (the draft was
 * truly not applied). `items` is a bulk draft's number of targets (undefined for a single command).
 */
export function describeKeyUse(use: KeyUse, items?: number): KeyUseText | null {
  const noun = items === undefined ? 'draft' : 'bulk draft';
  const first = use.decisions[0];
  if (first && items !== undefined) {
    const applied = use.decisions.filter((d) => d.status === 'applied').length;
    const actors = [...new Set(use.decisions.map((d) => d.actor))].join(', ');
    return {
      applied: applied > 0,
      text:
        `This ${noun} was already sent at ${formatDateTime(first.at)} by ${actors}: applied to ${applied} of ${items}` +
        (use.decisions.length > applied ? `, ${use.decisions.length - applied} not applied (changed or refused)` : '') +
        '.',
      link: auditLink(first),
    };
  }
  if (first) {
    const approved = first.approvedBy ? `, approved by ${first.approvedBy}` : '';
    if (first.status === 'applied')
      return {
        applied: true,
        text: `This draft was applied at ${formatDateTime(first.at)} by ${first.actor}${approved}.`,
        link: auditLink(first),
      };
    const why = first.status === 'conflict' ? 'what it acts on had changed' : `it was ${first.status}`;
    return {
      applied: false,
      text: `This draft was already sent at ${formatDateTime(first.at)} by ${first.actor}${approved} and not applied: ${why}. ${again}`,
      link: auditLink(first),
    };
  }
  const d = use.draft;
  if (!d) return null;
  const link = approvalLink(d.approvalId);
  const sent = `This ${noun} was sent for approval at ${formatDateTime(d.createdAt)} by ${d.drafter}`;
  const decided = d.decidedAt ? ` at ${formatDateTime(d.decidedAt)}` : '';
  const by = d.decidedBy ? ` by ${d.decidedBy}` : '';
  switch (d.status) {
    case 'pending':
      return { applied: false, text: `${sent}; it waits for a second operator.`, link };
    case 'applying':
      return { applied: true, text: `${sent}, approved${by}${decided}, and is being applied.`, link };
    case 'applied':
      return { applied: true, text: `${sent} and applied${decided}, approved${by}.`, link };
    case 'rejected':
      return {
        applied: false,
        text: `${sent} and rejected${decided}${by}${d.decisionReason ? `: ${d.decisionReason}` : ''}. ${again}`,
        link,
      };
    case 'expired':
      return {
        applied: false,
        text: `${sent} and expired unapproved at ${formatDateTime(d.expiresAt)}. ${again}`,
        link,
      };
    default:
      return {
        applied: false,
        text: `${sent} and approved${by}${decided}, but not applied (${d.status}). ${again}`,
        link,
      };
  }
}

import type { ApprovalRow } from '@/trpc/api-types';

interface PreviewShape {
  expectedHolds?: boolean;
  blockers?: string[];
  effects?: {
    transitions?: { subject: string; from: string; to: string }[];
    compensations?: { actionSequence: number; name: string }[];
    notes?: string[];
  };
  notFound?: string;
  target?: { id: string };
}

/** What the command would do, as it was previewed when drafted (a bulk: one line per target). */
export function ApprovalPreview({ approval }: { approval: ApprovalRow }) {
  const previews = (Array.isArray(approval.preview) ? approval.preview : [approval.preview]) as PreviewShape[];
  return (
    <ul className="approval-preview" data-testid="approval-preview">
      {previews.slice(0, 10).flatMap((p, i) => {
        const who = approval.bulk && p.target ? `${p.target.id.slice(0, 8)}: ` : '';
        if (p.notFound) return [<li key={`nf-${i}`}>{who}not found</li>];
        return [
          ...(p.effects?.transitions ?? []).map((t) => (
            <li key={`t-${i}-${t.subject}`}>
              {who}
              {t.subject}: {t.from} → {t.to}
            </li>
          )),
          ...(p.effects?.compensations ?? []).map((c) => (
            <li key={`c-${i}-${c.actionSequence}`}>
              {who}compensates step {c.actionSequence} ({c.name})
            </li>
          )),
          ...(p.effects?.notes ?? []).map((n) => (
            <li key={`n-${i}-${n}`}>
              {who}
              {n}
            </li>
          )),
          ...(p.blockers ?? []).map((b) => (
            <li key={`b-${i}-${b}`} className="text-bad">
              {who}cannot apply: {b}
            </li>
          )),
        ];
      })}
      {previews.length > 10 ? <li className="muted">and {previews.length - 10} more targets</li> : null}
    </ul>
  );
}

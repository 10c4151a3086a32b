import Link from 'next/link';
import type { decidedDraftOf } from './repair-outcome';

/** A replayed key whose draft was decided already: nothing was done now; say what became of it. */
export function DecidedDraftNotice({ decided }: { decided: NonNullable<ReturnType<typeof decidedDraftOf>> }) {
  return (
    <p className="notice notice-bad" role="status" data-testid="repair-draft-decided">
      This draft was already {decided.status}
      {decided.decidedBy ? ` by ${decided.decidedBy}` : ''}
      {decided.reason ? `: ${decided.reason}` : ''}. Nothing was done now; draft it again to try once more.{' '}
      <Link href={`/approvals?id=${encodeURIComponent(decided.approvalId)}`}>See it in the approvals queue</Link>
    </p>
  );
}

import { toneFor } from '@/runs/run-statuses';

/** A status word on a coloured pill; the word stays readable without the colour. */
export function StatusBadge({
  status,
  kind = 'run',
  testId,
}: {
  status: string;
  kind?: 'run' | 'step';
  testId?: string;
}) {
  return (
    <span className={`badge badge-${toneFor(kind, status)}`} data-testid={testId}>
      {status}
    </span>
  );
}

import type { StepRow } from '@/trpc/api-types';
import { formatClock, formatDuration } from '@/ui/format-time';
import { JsonInline } from '@/ui/json-block';
import { StatusBadge } from '@/ui/status-badge';
import { errorMessage } from './error-message';

/** The run's steps in order, with attempts and the result or error of each. */
export function StepsTable({ steps, now }: { steps: StepRow[]; now: number }) {
  if (steps.length === 0) return <p className="empty">No steps recorded yet.</p>;
  return (
    <table className="table" data-testid="steps-table">
      <thead>
        <tr>
          <th>#</th>
          <th>Step</th>
          <th>Status</th>
          <th>Attempts</th>
          <th>Started</th>
          <th>Finished</th>
          <th>Took</th>
          <th>Result</th>
        </tr>
      </thead>
      <tbody>
        {steps.map((step) => (
          <tr key={step.id} data-testid="step-row" data-step-name={step.name}>
            <td className="num">{step.sequence}</td>
            <td className="mono nowrap">{step.name}</td>
            <td>
              <StatusBadge status={step.status} kind="step" testId="step-status" />
            </td>
            <td className="num">
              {step.attempts}/{step.maxAttempts}
            </td>
            <td title={step.startedAt ?? undefined}>{step.startedAt ? formatClock(step.startedAt, true) : '—'}</td>
            <td title={step.finishedAt ?? undefined}>{step.finishedAt ? formatClock(step.finishedAt, true) : '—'}</td>
            <td className="num">
              {step.startedAt
                ? formatDuration(
                    (step.finishedAt ? new Date(step.finishedAt).getTime() : now) - new Date(step.startedAt).getTime(),
                  )
                : '—'}
            </td>
            <td>
              {step.error !== null ? (
                <span className="text-bad">{errorMessage(step.error) ?? <JsonInline value={step.error} />}</span>
              ) : step.output !== null ? (
                <JsonInline value={step.output} max={80} />
              ) : (
                <span className="muted">—</span>
              )}
            </td>
          </tr>
        ))}
      </tbody>
    </table>
  );
}

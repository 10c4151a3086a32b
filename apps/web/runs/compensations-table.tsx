import type { CompensationRow, StepRow } from '@/trpc/api-types';
import { ClockTime } from '@/ui/clock-time';
import { formatSpan } from '@/ui/format-time';
import { JsonInline } from '@/ui/json-block';
import { StatusBadge } from '@/ui/status-badge';
import { compensationLines } from './compensation-lines';
import { errorMessage } from './error-message';
import { ScrollBox } from '@/ui/scroll-box';

const columns = 8;

/** What the run undid, level by level, in the order it ran; each row names the step it undoes. */
export function CompensationsTable({
  compensations,
  steps,
  now,
}: {
  compensations: CompensationRow[];
  steps: StepRow[];
  now: number;
}) {
  const stepName = new Map(steps.map((s) => [s.sequence, s.name]));
  return (
    <ScrollBox label="Compensations">
      <table className="table" data-testid="compensations-table">
        <thead>
          <tr>
            <th>Undoes step</th>
            <th>Compensation</th>
            <th>Status</th>
            <th className="num">Attempts</th>
            <th>Started</th>
            <th>Finished</th>
            <th className="num">Took</th>
            <th>Result</th>
          </tr>
        </thead>
        <tbody>
          {compensationLines(compensations).map((line) => {
            if (line.type === 'level')
              return (
                <tr key={`level-${line.level}`} className="block-row">
                  <td colSpan={columns}>
                    Rollback {line.level} · {line.count} {line.count === 1 ? 'compensation' : 'compensations'}, newest
                    step first
                  </td>
                </tr>
              );
            const c = line.compensation;
            return (
              <tr key={c.id} data-testid="compensation-row" data-compensation-name={c.name} className="in-level">
                <td className="nowrap">
                  <span className="muted">#{c.actionSequence}</span>{' '}
                  <span className="mono">{stepName.get(c.actionSequence) ?? '?'}</span>
                </td>
                <td className="mono">{c.name}</td>
                <td>
                  <StatusBadge status={c.status} kind="step" testId="compensation-status" />
                </td>
                <td className="num">
                  {c.attempts}/{c.maxAttempts}
                </td>
                <td className="nowrap">
                  <ClockTime iso={c.startedAt} />
                </td>
                <td className="nowrap">
                  <ClockTime iso={c.finishedAt} />
                </td>
                <td className="num">{formatSpan(c.startedAt, c.finishedAt, now)}</td>
                <td>
                  {c.error !== null ? (
                    <span className="text-bad">{errorMessage(c.error) ?? <JsonInline value={c.error} />}</span>
                  ) : c.output !== null ? (
                    <JsonInline value={c.output} max={80} />
                  ) : (
                    <span className="muted">—</span>
                  )}
                </td>
              </tr>
            );
          })}
        </tbody>
      </table>
    </ScrollBox>
  );
}

import type { StepRow as Step } from '@/trpc/api-types';
import { formatSpan } from '@/ui/format-time';
import { ClockTime } from '@/ui/clock-time';
import { StatusBadge } from '@/ui/status-badge';
import { InFlightTag, inFlightAtEnd } from './in-flight-tag';
import { StepKindLabel } from './step-kind-label';
import { StepResult } from './step-result';

/** One step: kind, name, status, attempts (actions only), times, and what it came to. */
export function StepRow({
  step,
  inBlock,
  childRunId,
  now,
  runEndedAt,
}: {
  step: Step;
  inBlock: boolean;
  childRunId: string | undefined;
  now: number;
  /** When the run ended, if it has: a step still Running then is shown as in flight, its time stopped there. */
  runEndedAt: string | null;
}) {
  const inFlight = inFlightAtEnd(step.status, runEndedAt);
  return (
    <tr
      data-testid="step-row"
      data-step-name={step.name}
      data-step-kind={step.kind}
      className={inBlock ? 'in-block' : undefined}
    >
      <td className="num">{step.sequence}</td>
      <td>
        <StepKindLabel kind={step.kind} />
      </td>
      <td className="mono">{step.name}</td>
      <td>
        <StatusBadge status={step.status} kind="step" testId="step-status" />
        {inFlight ? (
          <>
            {' '}
            <InFlightTag />
          </>
        ) : null}
      </td>
      <td className="num">{step.kind === 'action' ? `${step.attempts}/${step.maxAttempts}` : '—'}</td>
      <td className="nowrap">
        <ClockTime iso={step.startedAt} />
      </td>
      <td className="nowrap">
        <ClockTime iso={step.finishedAt} />
      </td>
      <td className="num">{formatSpan(step.startedAt, inFlight ? runEndedAt : step.finishedAt, now)}</td>
      <td>
        <StepResult step={step} childRunId={childRunId} now={now} />
      </td>
    </tr>
  );
}

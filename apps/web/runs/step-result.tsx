import Link from 'next/link';
import type { ReactNode } from 'react';
import type { StepRow } from '@/trpc/api-types';
import { formatNear, formatRelative } from '@/ui/format-time';
import { JsonInline } from '@/ui/json-block';
import { errorMessage } from './error-message';

const waitWords: Record<string, string> = { timer: 'wakes', signal: 'gives up' };

/**
 * What a step came to: its error or output, and, for a step still waiting, when it wakes (a timer)
 * or gives up (a signal's timeout). A child step links to the child run when its id is known.
 */
export function StepResult({ step, childRunId, now }: { step: StepRow; childRunId: string | undefined; now: number }) {
  const waiting = step.status === 'Waiting' || step.status === 'Pending';
  const parts: ReactNode[] = [];
  if (step.kind === 'child')
    parts.push(
      childRunId ? (
        <Link key="child" href={`/runs/${childRunId}`} data-testid="child-run-link" title={childRunId}>
          child run <span className="mono">{childRunId.slice(0, 8)}</span> →
        </Link>
      ) : (
        <span key="child" className="muted">
          child run id not recorded
        </span>
      ),
    );
  if (waiting && step.wakeAt)
    parts.push(
      <span key="wake" className="muted" data-testid="step-wake-at">
        {waitWords[step.kind] ?? 'due'}{' '}
        <time dateTime={step.wakeAt} title={step.wakeAt}>
          {formatNear(step.wakeAt, now)}
        </time>{' '}
        ({formatRelative(step.wakeAt, now)})
      </span>,
    );
  else if (waiting && step.kind === 'signal')
    parts.push(
      <span key="wake" className="muted">
        no timeout
      </span>,
    );
  if (step.error !== null)
    parts.push(
      <span key="error" className="text-bad">
        {errorMessage(step.error) ?? <JsonInline value={step.error} />}
      </span>,
    );
  else if (step.output !== null) parts.push(<JsonInline key="output" value={step.output} max={80} />);
  if (parts.length === 0)
    parts.push(
      <span key="none" className="muted">
        —
      </span>,
    );
  return <div className="step-result">{parts}</div>;
}

import { Timestamp } from '@/ui/timestamp';
import type { InstanceSummary } from './instance-types';

/** The instance's identity, position and times, always in the same places. */
export function InstanceFacts({ instance: i, now }: { instance: InstanceSummary; now: number }) {
  return (
    <dl className="facts" data-testid="instance-facts">
      <dt>Instance id</dt>
      <dd className="mono">{i.id}</dd>
      <dt>Process</dt>
      <dd>{i.processName}</dd>
      <dt>Correlation key</dt>
      <dd className="mono">{i.correlationKey}</dd>
      <dt>Current state</dt>
      <dd data-testid="instance-state">{i.currentState}</dd>
      <dt>Created</dt>
      <dd>
        <Timestamp iso={i.createdAt} now={now} />
      </dd>
      <dt>Last update</dt>
      <dd>
        <Timestamp iso={i.updatedAt} now={now} />
      </dd>
      <dt>Completed</dt>
      <dd>
        <Timestamp iso={i.completedAt} now={now} />
      </dd>
      <dt>Next timer due</dt>
      <dd>
        <Timestamp iso={i.nextTimerDueAt} now={now} />
        {i.nextTimerDueAt && i.status === 'QUARANTINED' ? (
          <span className="muted"> (held: a quarantined instance&apos;s timers do not fire)</span>
        ) : null}
      </dd>
      <dt>Last message</dt>
      <dd className="mono">{i.lastMessageId ?? '—'}</dd>
      <dt>Version</dt>
      <dd>{i.version}</dd>
    </dl>
  );
}

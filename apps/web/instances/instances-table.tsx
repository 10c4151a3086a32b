import Link from 'next/link';
import { AllSelectBox, RowSelectBox } from '@/ui/select-box';
import { formatAge, formatRelative } from '@/ui/format-time';
import { FailureSummary } from './failure-summary';
import { InstanceStatusBadge } from './instance-status-badge';
import type { InstanceSummary } from './instance-types';

/**
 * One row per instance, stalest first (the API's order), with a tick box; the key links to the
 * instance. Scrolls inside its own box on a narrow screen.
 */
export function InstancesTable({
  instances,
  now,
  selected,
  onSelect,
}: {
  instances: InstanceSummary[];
  now: number;
  selected: ReadonlySet<string>;
  onSelect: (next: ReadonlySet<string>) => void;
}) {
  return (
    <div className="table-scroll" role="region" aria-label="Instances" tabIndex={0}>
      <table className="table" data-testid="instances-table">
        <thead>
          <tr>
            <th>
              <AllSelectBox
                ids={instances.map((r) => r.id)}
                label="Select every instance shown"
                selected={selected}
                onSelect={onSelect}
              />
            </th>
            <th>Status</th>
            <th>Process</th>
            <th>Correlation key</th>
            <th>State</th>
            <th>Last update</th>
            <th>Next timer</th>
            <th>Failure</th>
          </tr>
        </thead>
        <tbody>
          {instances.map((i) => (
            <tr
              key={i.id}
              data-testid="instance-row"
              data-instance-id={i.id}
              className={i.status === 'QUARANTINED' || i.failure || i.failingTimeout ? 'row-stuck' : undefined}
            >
              <td>
                <RowSelectBox
                  id={i.id}
                  label={`Select instance ${i.correlationKey}`}
                  selected={selected}
                  onSelect={onSelect}
                />
              </td>
              <td className="nowrap">
                <InstanceStatusBadge status={i.status} />
              </td>
              <td>{i.processName}</td>
              <td>
                <Link href={`/instances/${i.id}`} className="mono" title={`instance ${i.id}`}>
                  {i.correlationKey}
                </Link>
              </td>
              <td>{i.currentState}</td>
              <td className="nowrap" title={i.updatedAt}>
                {formatAge(i.updatedAt, now)}
              </td>
              <td className="nowrap" title={i.nextTimerDueAt ?? undefined}>
                {i.nextTimerDueAt ? (
                  i.status === 'QUARANTINED' ? (
                    <span className="muted">held ({formatRelative(i.nextTimerDueAt, now)})</span>
                  ) : (
                    formatRelative(i.nextTimerDueAt, now)
                  )
                ) : (
                  <span className="muted">—</span>
                )}
              </td>
              <td>
                <FailureSummary failure={i.failure} failingTimeout={i.failingTimeout} now={now} />
              </td>
            </tr>
          ))}
        </tbody>
      </table>
    </div>
  );
}

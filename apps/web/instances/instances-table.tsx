import Link from 'next/link';
import { formatAge, formatRelative } from '@/ui/format-time';
import { FailureSummary } from './failure-summary';
import { InstanceStatusBadge } from './instance-status-badge';
import type { InstanceSummary } from './instance-types';

/** One row per instance, stalest first (the API's order); the key links to the instance. */
export function InstancesTable({ instances, now }: { instances: InstanceSummary[]; now: number }) {
  return (
    <table className="table" data-testid="instances-table">
      <thead>
        <tr>
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
            className={i.status === 'QUARANTINED' || i.failure ? 'row-stuck' : undefined}
          >
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
              <FailureSummary failure={i.failure} now={now} />
            </td>
          </tr>
        ))}
      </tbody>
    </table>
  );
}

import Link from 'next/link';
import { runsHref, type RunsFilter } from './runs-filter';
import { openRunStatuses, terminalRunStatuses } from './run-statuses';

/**
 * Runs per status under the rest of the current filter (flow, stuck, search), each a link that
 * picks that status. The server stops counting at `cap` ("10000+").
 */
export function RunStatusCounts({
  filter,
  counts,
  cap,
}: {
  filter: RunsFilter;
  counts: Record<string, number>;
  cap: number;
}) {
  const statuses = [...openRunStatuses, ...terminalRunStatuses].filter((s) => (counts[s] ?? 0) > 0);
  if (statuses.length === 0) return null;
  return (
    <ul className="status-counts" aria-label="Runs per status" data-testid="status-counts">
      {statuses.map((s) => {
        const n = counts[s] ?? 0;
        return (
          <li key={s}>
            <Link
              href={runsHref({ ...filter, status: s })}
              aria-current={filter.status === s ? 'true' : undefined}
              data-testid={`count-${s}`}
            >
              {s} {n >= cap ? `${cap}+` : n}
            </Link>
          </li>
        );
      })}
    </ul>
  );
}

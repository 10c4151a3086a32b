'use client';

import { useRouter } from 'next/navigation';
import { runsHref, statusChoices, type RunsFilter } from './runs-filter';

/** Status and order pickers; changing one rewrites the URL, which re-renders the list. */
export function RunsFilterBar({ filter }: { filter: RunsFilter }) {
  const router = useRouter();
  const go = (next: RunsFilter) => router.replace(runsHref(next), { scroll: false });
  return (
    <div className="filters">
      <label>
        Status{' '}
        <select
          value={filter.status}
          onChange={(e) => go({ ...filter, status: e.target.value })}
          data-testid="status-filter"
        >
          {statusChoices.map((c) => (
            <option key={c.value} value={c.value}>
              {c.label}
            </option>
          ))}
        </select>
      </label>
      <label>
        Order{' '}
        <select
          value={filter.order}
          onChange={(e) => go({ ...filter, order: e.target.value === 'stalest' ? 'stalest' : 'newest' })}
        >
          <option value="newest">Newest first</option>
          <option value="stalest">Stalest first</option>
        </select>
      </label>
    </div>
  );
}

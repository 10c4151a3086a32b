'use client';

import Link from 'next/link';
import { ListSearchForm } from '@/ui/list-search-form';
import { useFilterNavigation } from '@/ui/use-filter-navigation';
import { startTransition, useOptimistic } from 'react';
import { instancesHref, instanceTabs, type InstancesFilter } from './instances-filter';

const stalledChoices = [1, 5, 15, 60, 240, 1440];

/**
 * Status tabs (links, so each tab is an address) with the quarantined count, a "Failing only" toggle
 * (a failure record or a failing timeout, ADR 0127), and for Active a "stalled for more than N minutes" picker; a change goes to the list's URL for it (a history entry, so Back undoes it), which re-renders the list.
 */
export function InstancesFilterBar({
  filter: current,
  counts,
}: {
  filter: InstancesFilter;
  /** Per status under the search and state filters; null while unknown; "10000+" at the API's cap. */
  counts: Record<InstancesFilter['status'], string> | null;
}) {
  const navigate = useFilterNavigation();
  const [filter, setFilter] = useOptimistic(current);
  const go = (next: InstancesFilter) =>
    startTransition(() => {
      setFilter(next);
      navigate(instancesHref(next));
    });
  return (
    <div className="filters">
      <ListSearchForm
        fields={[
          {
            name: 'q',
            label: 'Search',
            value: filter.q,
            placeholder: 'Instance id or correlation key',
            maxLength: 500,
            testId: 'instances-search',
            type: 'search',
          },
          {
            name: 'state',
            label: 'State',
            value: filter.state,
            placeholder: 'any state, e.g. ManualReview',
            maxLength: 200,
            size: 18,
            testId: 'state-filter',
          },
        ]}
        onApply={(v) => go({ ...filter, q: v.q ?? '', state: v.state ?? '' })}
      />
      <nav className="tabs" aria-label="Instance status">
        {instanceTabs.map((tab) => (
          <Link
            key={tab.status}
            href={instancesHref({ ...filter, status: tab.status, stalledMinutes: null })}
            className={tab.status === filter.status ? 'tab tab-current' : 'tab'}
            aria-current={tab.status === filter.status ? 'page' : undefined}
            data-testid={`tab-${tab.status.toLowerCase()}`}
          >
            {tab.label}
            {counts === null ? null : tab.status === 'QUARANTINED' ? (
              counts.QUARANTINED !== '0' ? (
                <span className="badge badge-bad badge-small" data-testid="quarantined-count">
                  {counts.QUARANTINED}
                </span>
              ) : null
            ) : (
              <span className="badge badge-muted badge-small" data-testid={`count-${tab.status}`}>
                {counts[tab.status]}
              </span>
            )}
          </Link>
        ))}
      </nav>
      <label className="toggle">
        <input
          type="checkbox"
          checked={filter.failingOnly}
          onChange={(e) => go({ ...filter, failingOnly: e.target.checked })}
          data-testid="failing-only"
        />{' '}
        Failing only
      </label>
      {filter.status === 'ACTIVE' ? (
        <label>
          Stalled for more than{' '}
          <select
            value={filter.stalledMinutes ?? ''}
            onChange={(e) => go({ ...filter, stalledMinutes: e.target.value ? Number(e.target.value) : null })}
            data-testid="stalled-filter"
          >
            <option value="">any time (all active)</option>
            {[...new Set([...stalledChoices, ...(filter.stalledMinutes ? [filter.stalledMinutes] : [])])]
              .sort((a, b) => a - b)
              .map((m) => (
                <option key={m} value={m}>
                  {m < 60 ? `${m} min` : `${m / 60} h`}
                </option>
              ))}
          </select>
        </label>
      ) : null}
    </div>
  );
}

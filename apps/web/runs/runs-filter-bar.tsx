'use client';

import { ListSearchForm } from '@/ui/list-search-form';
import { useFilterNavigation } from '@/ui/use-filter-navigation';
import { startTransition, useOptimistic } from 'react';
import { runsHref, stalledChoices, statusChoiceGroups, type RunsFilter } from './runs-filter';

/**
 * Search (run id or business key), flow, status, stuck-only and order pickers; changing one goes to the list's URL for it
 * (a history entry, so Back undoes it), which re-renders the list.
 * The pickers show the new choice at once (optimistically) instead of snapping back while the
 * server renders the new URL.
 */
export function RunsFilterBar({ filter: current }: { filter: RunsFilter }) {
  const navigate = useFilterNavigation();
  const [filter, setFilter] = useOptimistic(current);
  const go = (next: RunsFilter) =>
    startTransition(() => {
      setFilter(next);
      navigate(runsHref(next));
    });
  const stuckByStatus = filter.status === 'stuck';
  return (
    <div className="filters">
      <ListSearchForm
        fields={[
          {
            name: 'q',
            label: 'Search',
            value: filter.q,
            placeholder: 'Run id or business key',
            maxLength: 500,
            testId: 'runs-search',
            type: 'search',
          },
          {
            name: 'flow',
            label: 'Flow',
            value: filter.flow,
            placeholder: 'any flow',
            maxLength: 200,
            size: 14,
            testId: 'flow-filter',
          },
        ]}
        onApply={(v) => go({ ...filter, q: v.q ?? '', flow: v.flow ?? '' })}
      />
      <label>
        Status{' '}
        <select
          value={filter.status}
          onChange={(e) => go({ ...filter, status: e.target.value })}
          data-testid="status-filter"
        >
          {statusChoiceGroups.map((group) => {
            const options = group.choices.map((c) => (
              <option key={c.value} value={c.value}>
                {c.label}
              </option>
            ));
            return group.label ? (
              <optgroup key={group.label} label={group.label}>
                {options}
              </optgroup>
            ) : (
              options
            );
          })}
        </select>
      </label>
      <label className="toggle" title={stuckByStatus ? 'Set by the status filter' : undefined}>
        <input
          type="checkbox"
          checked={filter.stuckOnly || stuckByStatus}
          disabled={stuckByStatus}
          onChange={(e) => go({ ...filter, stuckOnly: e.target.checked })}
          data-testid="stuck-only"
        />{' '}
        Stuck only
      </label>
      <label>
        Not updated for{' '}
        <select
          value={filter.stalledMinutes ?? ''}
          onChange={(e) => go({ ...filter, stalledMinutes: e.target.value ? Number(e.target.value) : null })}
          data-testid="runs-stalled-filter"
        >
          <option value="">any time</option>
          {stalledChoices.map((m) => (
            <option key={m} value={m}>
              {m < 60 ? `${m} min` : `${m / 60} h`}
            </option>
          ))}
        </select>
      </label>
      {filter.reason ? (
        <button
          type="button"
          className="filter-chip"
          onClick={() => go({ ...filter, reason: '' })}
          data-testid="reason-filter"
          aria-label={`Stuck reason ${filter.reason}: remove this filter`}
        >
          Stuck reason: <code>{filter.reason}</code> ✕
        </button>
      ) : null}
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

import { allRunStatuses, isRunStatus, openRunStatuses, terminalRunStatuses, type RunStatus } from './run-statuses';

/** What the runs list shows; kept in the URL so a filtered view can be shared and reloaded. */
export interface RunsFilter {
  /** 'all', 'open', 'finished', or one run status. */
  status: string;
  order: 'newest' | 'stalest';
}

export const statusChoices: { value: string; label: string }[] = [
  { value: 'all', label: 'All statuses' },
  { value: 'open', label: 'Open (not finished)' },
  { value: 'finished', label: 'Finished' },
  ...allRunStatuses.map((s) => ({ value: s, label: s })),
];

const first = (v: string | string[] | undefined) => (Array.isArray(v) ? v[0] : v);

/** Reads the filter from search params; anything unknown falls back to the default. */
export function parseRunsFilter(params: Record<string, string | string[] | undefined>): RunsFilter {
  const status = first(params.status) ?? 'all';
  const order = first(params.order);
  return {
    status: statusChoices.some((c) => c.value === status) ? status : 'all',
    order: order === 'stalest' ? 'stalest' : 'newest',
  };
}

/** The `status` input for runs.list, or undefined for every status. */
export function statusesFor(choice: string): RunStatus[] | undefined {
  if (choice === 'open') return [...openRunStatuses];
  if (choice === 'finished') return [...terminalRunStatuses];
  return isRunStatus(choice) ? [choice] : undefined;
}

export function runsHref(filter: RunsFilter): string {
  const params = new URLSearchParams();
  if (filter.status !== 'all') params.set('status', filter.status);
  if (filter.order !== 'newest') params.set('order', filter.order);
  const query = params.toString();
  return query ? `/runs?${query}` : '/runs';
}

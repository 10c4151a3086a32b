import { isRunStatus, openRunStatuses, terminalRunStatuses, type RunStatus } from './run-statuses';

/** What the runs list shows; kept in the URL so a filtered view can be shared and reloaded. */
export interface RunsFilter {
  /** 'all', 'open', 'stuck', 'finished', or one run status. */
  status: string;
  /** Only runs with a stuck reason (the API filters them: runs.page stuckOnly). */
  stuckOnly: boolean;
  order: 'newest' | 'stalest';
  /** One flow's runs; '' for every flow. */
  flow: string;
  /** A run id or business key, matched exactly by the API; '' for no search. */
  q: string;
  /** Only runs not updated for more than this many minutes; null for any. */
  stalledMinutes: number | null;
  /** Only runs stuck for this kind of reason (replay_blocked, owner_gone, ...); '' for any. */
  reason: string;
}

/** The "not updated for" choices, in minutes. */
export const stalledChoices = [5, 15, 60, 240, 1440];

export interface StatusChoiceGroup {
  /** The `<optgroup>` label; null for choices that belong to no group. */
  label: string | null;
  choices: { value: string; label: string }[];
}

export const statusChoiceGroups: StatusChoiceGroup[] = [
  { label: null, choices: [{ value: 'all', label: 'All statuses' }] },
  {
    label: 'Open',
    choices: [{ value: 'open', label: 'Any open' }, ...openRunStatuses.map((s) => ({ value: s, label: s }))],
  },
  { label: 'Needs attention', choices: [{ value: 'stuck', label: 'Stuck (stuck reason set)' }] },
  {
    label: 'Finished',
    choices: [
      { value: 'finished', label: 'Any finished' },
      ...terminalRunStatuses.map((s) => ({ value: s, label: s })),
    ],
  },
];

const choiceValues = new Set(statusChoiceGroups.flatMap((g) => g.choices.map((c) => c.value)));
const first = (v: string | string[] | undefined) => (Array.isArray(v) ? v[0] : v);

/** Reads the filter from search params; anything unknown falls back to the default. */
export function parseRunsFilter(params: Record<string, string | string[] | undefined>): RunsFilter {
  const status = first(params.status) ?? 'all';
  const order = first(params.order);
  return {
    status: choiceValues.has(status) ? status : 'all',
    stuckOnly: first(params.stuck) === '1',
    order: order === 'stalest' ? 'stalest' : 'newest',
    flow: (first(params.flow) ?? '').trim().slice(0, 200),
    q: (first(params.q) ?? '').trim().slice(0, 500),
    stalledMinutes: stalledChoices.includes(Number(first(params.stalled))) ? Number(first(params.stalled)) : null,
    reason: (first(params.reason) ?? '').trim().slice(0, 200),
  };
}

/** Whether the list keeps only runs with a stuck reason (the "Stuck" status choice or the toggle). */
export function wantsStuck(filter: RunsFilter): boolean {
  return filter.stuckOnly || filter.status === 'stuck' || filter.reason !== '';
}

/**
 * The `status` input for runs.list, or undefined for every status. Asking for stuck runs narrows
 * the query to open statuses: a finished run never keeps a stuck reason, and without that the
 * browser-side filter would look for stuck runs among the newest finished ones.
 */
export function statusesFor(filter: RunsFilter): RunStatus[] | undefined {
  const choice = filter.status;
  const chosen: RunStatus[] | undefined =
    choice === 'open' || choice === 'stuck'
      ? [...openRunStatuses]
      : choice === 'finished'
        ? [...terminalRunStatuses]
        : isRunStatus(choice)
          ? [choice]
          : undefined;
  if (!wantsStuck(filter)) return chosen;
  const open = (chosen ?? [...openRunStatuses]).filter((s) => (openRunStatuses as readonly string[]).includes(s));
  return open.length > 0 ? open : chosen;
}

export function runsHref(filter: RunsFilter): string {
  const params = new URLSearchParams();
  if (filter.status !== 'all') params.set('status', filter.status);
  if (filter.stuckOnly) params.set('stuck', '1');
  if (filter.order !== 'newest') params.set('order', filter.order);
  if (filter.flow) params.set('flow', filter.flow);
  if (filter.q) params.set('q', filter.q);
  if (filter.stalledMinutes !== null) params.set('stalled', String(filter.stalledMinutes));
  if (filter.reason) params.set('reason', filter.reason);
  const query = params.toString();
  return query ? `/runs?${query}` : '/runs';
}

/** The runs.page input for a filter (without the cursor, which the list adds page by page). */
export function pageInputFor(filter: RunsFilter) {
  const status = statusesFor(filter);
  return {
    ...(status ? { status } : {}),
    ...(wantsStuck(filter) ? { stuckOnly: true } : {}),
    ...(filter.flow ? { flowName: filter.flow } : {}),
    ...(filter.q ? { search: filter.q } : {}),
    ...(filter.stalledMinutes !== null ? { staleForSeconds: filter.stalledMinutes * 60 } : {}),
    ...(filter.reason ? { stuckReason: filter.reason } : {}),
    order: filter.order,
    limit: 50,
  };
}

/** Instance statuses as the engine names them (duplicated: the console imports no engine code). */
export const instanceTabs = [
  { status: 'ACTIVE', label: 'Active' },
  { status: 'QUARANTINED', label: 'Quarantined' },
  { status: 'COMPLETED', label: 'Completed' },
] as const;
export type InstanceStatus = (typeof instanceTabs)[number]['status'];

/** What the instances page shows; kept in the URL so a view can be shared and reloaded. */
export interface InstancesFilter {
  status: InstanceStatus;
  /** Active only: instances not updated for more than this many minutes; null for all. */
  stalledMinutes: number | null;
  /** One state (ManualReview, ...); '' for any. */
  state: string;
  /** An instance id or correlation key, matched exactly by the API; '' for no search. */
  q: string;
  /**
   * Only failing instances: a failure record, or a timeout that keeps failing (the API filters them:
   * instances.page failingOnly, ADR 0127).
   */
  failingOnly: boolean;
}

const first = (v: string | string[] | undefined) => (Array.isArray(v) ? v[0] : v);
const maxStalledMinutes = 60 * 24 * 30;

/** Reads the filter from search params; anything unknown falls back to the default. */
export function parseInstancesFilter(params: Record<string, string | string[] | undefined>): InstancesFilter {
  const raw = first(params.status);
  const status = instanceTabs.find((t) => t.status === raw)?.status ?? 'ACTIVE';
  const minutes = Number(first(params.stalled));
  const stalledMinutes =
    status === 'ACTIVE' && Number.isInteger(minutes) && minutes > 0 && minutes <= maxStalledMinutes ? minutes : null;
  return {
    status,
    stalledMinutes,
    state: (first(params.state) ?? '').trim().slice(0, 200),
    q: (first(params.q) ?? '').trim().slice(0, 500),
    failingOnly: first(params.failing) === '1',
  };
}

export function instancesHref(filter: InstancesFilter): string {
  const params = new URLSearchParams();
  if (filter.status !== 'ACTIVE') params.set('status', filter.status);
  if (filter.status === 'ACTIVE' && filter.stalledMinutes !== null)
    params.set('stalled', String(filter.stalledMinutes));
  if (filter.state) params.set('state', filter.state);
  if (filter.q) params.set('q', filter.q);
  if (filter.failingOnly) params.set('failing', '1');
  const query = params.toString();
  return query ? `/instances?${query}` : '/instances';
}

/** The Tone of an instance status badge (reuses the run badge colours). */
export function instanceTone(status: string): 'active' | 'ok' | 'bad' | 'muted' {
  return status === 'ACTIVE' ? 'active' : status === 'COMPLETED' ? 'ok' : status === 'QUARANTINED' ? 'bad' : 'muted';
}

/** The instances.page input for a filter (without the cursor). */
export function instancesPageInputFor(filter: InstancesFilter) {
  return {
    status: [filter.status],
    ...(filter.stalledMinutes !== null ? { staleForSeconds: filter.stalledMinutes * 60 } : {}),
    ...(filter.state ? { state: filter.state } : {}),
    ...(filter.q ? { search: filter.q } : {}),
    ...(filter.failingOnly ? { failingOnly: true } : {}),
    order: 'stalest' as const,
    limit: 50,
  };
}

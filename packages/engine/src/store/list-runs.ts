import type { Db } from './types.ts';

export interface ListRunsFilter {
  status?: string[];
  flowName?: string;
  /** Stalest first (least recently updated) by default; newest first on request. */
  order?: 'stalest' | 'newest';
  limit: number;
}

export async function listRuns(db: Db, filter: ListRunsFilter) {
  return db.flowRun.findMany({
    where: {
      ...(filter.status?.length ? { status: { in: filter.status } } : {}),
      ...(filter.flowName ? { flow_name: filter.flowName } : {}),
    },
    orderBy:
      filter.order === 'newest' ? [{ created_at: 'desc' }, { id: 'desc' }] : [{ updated_at: 'asc' }, { id: 'asc' }],
    take: filter.limit,
  });
}

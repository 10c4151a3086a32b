/**
 * Where a page of a run's or an instance's history starts: with neither bound, the newest rows; with
 * `before`, the rows older than that key (newest first); with `after`, the rows newer than it
 * (oldest first, so a caller that asks again from the last one reaches every row). The key is the
 * history's own unique order: a step's sequence, a compensation's (level, ordinal), an event's or a
 * transition's id.
 */
export interface HistoryWindow<K> {
  before?: K | undefined;
  after?: K | undefined;
  limit: number;
}

/** The direction a window reads in: oldest first only when it asks for what is newer than a key. */
export const readsForward = (w: HistoryWindow<unknown>) => w.after !== undefined;

/**
 * A run (or instance) named as a range of one value: the planner keeps it in the order (an
 * equality it would drop), so only the (run_id, id) index can give that order (page-flow-events).
 */
export const oneRun = (id: string) => ({ gte: id, lte: id });

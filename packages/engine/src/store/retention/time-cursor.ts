/**
 * Where a keyset walk over an old-rows index stopped: the time column and the key of the last row it
 * deleted. Rows it may not delete (an open instance's) stay behind the cursor, so each batch starts
 * past them instead of reading them again.
 */
export interface TimeCursor {
  at: Date;
  key: string;
}

/** A batch's deleted count and where the next batch starts (null when it deleted nothing). */
export interface KeysetBatch {
  deleted: number;
  next: TimeCursor | null;
}

/** The row the batch statements return: how many rows went and the last one's position. */
export interface KeysetBatchRow {
  deleted: number;
  last_at: Date | null;
  last_key: string | null;
}

export function toKeysetBatch(row: KeysetBatchRow | undefined): KeysetBatch {
  if (!row || row.deleted === 0 || row.last_at === null || row.last_key === null) return { deleted: 0, next: null };
  return { deleted: row.deleted, next: { at: row.last_at, key: row.last_key } };
}

/** Rows a history download reads per statement: a page of rows is all the server holds of it at once. */
export const historyPageRows = 50;

/** One array of a history document, read in keyset pages in the order it is written. */
export interface HistorySection {
  key: string;
  pages: () => AsyncIterable<readonly unknown[]>;
}

/**
 * A run's or an instance's history as a download writes it: the head row (read first, so a missing
 * one is a 404 before any byte), then each section page by page, and a last check that the head is
 * still there (retention may delete a finished run while its download runs).
 */
export interface HistoryDocument {
  kind: 'run' | 'instance';
  head: unknown;
  sections: HistorySection[];
  stillThere: () => Promise<boolean>;
}

/**
 * The pages of one keyset read: `read(after, take)` answers up to `take` rows after the row `after`
 * (undefined: from the first) in the section's order; paging stops at the first short page. Each page
 * is its own statement on a pooled connection, so nothing is held between pages.
 */
export async function* keysetPages<R>(
  read: (after: R | undefined, take: number) => Promise<R[]>,
  take = historyPageRows,
): AsyncGenerator<R[]> {
  let after: R | undefined;
  for (;;) {
    const rows = await read(after, take);
    if (rows.length > 0) yield rows;
    if (rows.length < take) return;
    after = rows.at(-1);
  }
}

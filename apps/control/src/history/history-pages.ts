import type { Database } from '@sagaflow/engine';

/**
 * The most rows a history download reads per statement. Pages are bounded by bytes
 * (`historyPageBytes`); this bounds a page of small rows, whose objects cost more than their text.
 * It was 50: a 30,000-event run of 2 KB events took 600 pages of two statements each, and under a plan
 * that reads the rest of the run per page (a table not yet analysed, an outlier run) most of a download's
 * time went to those statements (ADR 0142).
 */
export const historyPageRows = 1000;

/**
 * The most bytes of rows (each measured as PostgreSQL's text of the row) one page of a download
 * holds, past its first row: a page of large rows (an action's output may be 1 MB) is cut short, down
 * to one row, so a download waiting on a slow client holds a few MB whatever the rows' sizes
 * (ADR 0115, review 45).
 */
export const historyPageBytes = 2 * 1_048_576;

/**
 * How many rows' sizes a section's first page looks at; it doubles (up to `historyPageRows`) while
 * pages are not cut by bytes, so the first pages of a section of large rows measure few rows.
 */
const firstLook = 8;

/**
 * Rows of a section that existed when the download started are missing from what was written
 * (retention pruned them meanwhile): the document would be valid JSON but short, so it is not
 * finished (ADR 0115, review 45).
 */
export class HistoryShrank extends Error {
  constructor(
    readonly section: string,
    message: string,
  ) {
    super(message);
    this.name = 'HistoryShrank';
  }
}

/** One array of a history document, read in keyset pages in the order it is written. */
export interface HistorySection {
  key: string;
  /**
   * The section's pages. A table's section (`tableSection`) that ends having written fewer rows than
   * it counted as it began, or whose rows up to the last one written now number fewer than were
   * written, throws `HistoryShrank` after its last page.
   */
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
 * is its own statement on a pooled connection, so nothing is held between pages. For small rows only
 * (ids): it pages by rows, not bytes.
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

type Sql = Pick<Database['prisma'], '$queryRawUnsafe'>;

/**
 * A section read from one table, described twice: in SQL (`where`, on alias `t`, with `$1` the owner's
 * id; `order`, the keyset's columns and their types, all ascending) to measure and count its rows,
 * and as the Prisma read (`read`) that answers the rows themselves in the same order. The two must
 * select the same rows.
 */
export interface TableSectionSpec<R extends object> {
  key: string;
  table: string;
  where: string;
  owner: string;
  order: readonly (readonly [column: keyof R & string, type: string])[];
  read: (after: R | undefined, take: number) => Promise<R[]>;
}

function sqlValue(v: unknown): unknown {
  if (v instanceof Date) return v.toISOString();
  if (typeof v === 'bigint') return v.toString();
  return v;
}

/**
 * A section paged by rows and by bytes: before each page the sizes of the next rows are read (a
 * number per row, not the rows), and the page takes as many as fit in `historyPageBytes` (at least
 * one). The section's rows are counted as it begins; that count and a count after its last page are
 * what make a prune during the section break the download rather than shorten it (`HistoryShrank`).
 */
export function tableSection<R extends object>(db: Sql, spec: TableSectionSpec<R>): HistorySection {
  const from = `"sagaflow"."${spec.table}" t where (${spec.where})`;
  const columns = spec.order.map(([c]) => `t.${c}`).join(', ');
  const keyAt = (op: '>' | '<=', row: R, first: number) => ({
    sql: `(${columns}) ${op} (${spec.order.map(([, type], i) => `$${first + i}::${type}`).join(', ')})`,
    params: spec.order.map(([c]) => sqlValue(row[c])),
  });
  const sizesAfter = async (after: R | undefined, look: number): Promise<number[]> => {
    const beyond = after === undefined ? undefined : keyAt('>', after, 2);
    const limit = `$${2 + (beyond?.params.length ?? 0)}::int`;
    // The size of a row is taken only of the rows the limit kept: measured in the same select as the
    // filter, it would be computed for every row the plan sorts, which is every row of the section
    // past `after` when the planner expects few (an outlier run under a table's average statistics).
    const rows = await db.$queryRawUnsafe<{ bytes: number }[]>(
      `select octet_length(s::text)::float8 as bytes
         from (select t.* from ${from}${beyond ? ` and ${beyond.sql}` : ''} order by ${columns} limit ${limit}) s
        order by ${spec.order.map(([c]) => `s.${c}`).join(', ')}`,
      spec.owner,
      ...(beyond?.params ?? []),
      look,
    );
    return rows.map((r) => Number(r.bytes));
  };
  const countOf = async (through?: R): Promise<number> => {
    const upTo = through === undefined ? undefined : keyAt('<=', through, 2);
    const rows = await db.$queryRawUnsafe<{ n: number }[]>(
      `select count(*)::int as n from ${from}${upTo ? ` and ${upTo.sql}` : ''}`,
      spec.owner,
      ...(upTo?.params ?? []),
    );
    return Number(rows[0]?.n ?? 0);
  };
  return {
    key: spec.key,
    pages: async function* () {
      const rowsAtStart = await countOf();
      let after: R | undefined;
      let look = firstLook;
      let written = 0;
      for (;;) {
        const sizes = await sizesAfter(after, look);
        let take = 0;
        let bytes = 0;
        for (const size of sizes) {
          if (take > 0 && bytes + size > historyPageBytes) break;
          bytes += size;
          take += 1;
        }
        const rows = take === 0 ? [] : await spec.read(after, take);
        if (rows.length === 0) break;
        yield rows;
        written += rows.length;
        after = rows.at(-1);
        if (take === sizes.length && sizes.length < look) break;
        // After a cut the next page measures one row more than this one took, not twice as many (a page
        // of 1 MB rows measured four rows to send two, now three, ADR 0142); a page that fits whole
        // doubles what the next one measures.
        look = take < sizes.length ? Math.min(historyPageRows, take + 1) : Math.min(historyPageRows, look * 2);
      }
      if (written < rowsAtStart)
        throw new HistoryShrank(
          spec.key,
          `${spec.key}: ${written} rows written of the ${rowsAtStart} there were when the section began`,
        );
      if (after !== undefined) {
        const still = await countOf(after);
        if (still < written)
          throw new HistoryShrank(
            spec.key,
            `${spec.key}: ${written} rows written, of which ${still} are still there (rows were deleted meanwhile)`,
          );
      }
    },
  };
}

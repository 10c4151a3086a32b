import type { Database } from '../../src/db/database.ts';
import type { RawStatement } from '../../src/db/raw-db.ts';

/** One send of the hot path as the driver saw it: a lone statement or a round of several. */
export interface HotSend {
  /** Numbered from 1 in the order the sends went out. */
  n: number;
  /** Whether it went as a round of several statements (`driver.statements`, ADR 0066). */
  round: boolean;
  /** The runs (`run:<id>`) and business keys (`key:<flow>/<key>`) its statements carry. */
  keys: string[];
  /** The `n` of every send out when it went (sent and not yet answered). */
  beside: number[];
  /**
   * How long the slot of each of `beside` had been out when this one went, in ms: from its first
   * send, where it is a resend (see `origin`).
   */
  besideAgesMs: number[];
  /** When it went (`performance.now()`). */
  at: number;
  /**
   * When its slot went: its own `at`, or, for a resend (its keys all in an earlier send that failed:
   * a refused round's kinds, or items, sent again in that round's slot), that send's `origin`.
   */
  origin: number;
  /** Whether it is such a resend. */
  resend: boolean;
  /** Its answer was an error. */
  failed: boolean;
  /** Settled: its answer (or error) came back. */
  back: boolean;
}

/** A column's values, whatever the statement's shape (an array per column, or a lone item's scalars). */
const column = (value: unknown): unknown[] => (Array.isArray(value) ? value : [value]);

/**
 * The runs and business keys a hot statement carries, read from its values as the statements lay them
 * out (`store/step-transitions.ts`, `store/finish-top-runs.ts`, `store/insert-started-runs.ts`,
 * `store/insert-started-run-with-step.ts`): a transition's and a finish's first column is the run; a
 * start's are its flow and business key. Any other statement carries none.
 */
export function hotKeys(statement: RawStatement): string[] {
  const { text, values } = statement;
  const runs = (at: number) => column(values[at]).map((id) => `run:${String(id)}`);
  const starts = (flowAt: number, keyAt: number) => {
    const flows = column(values[flowAt]);
    return column(values[keyAt]).flatMap((key, i) =>
      key === null || key === undefined ? [] : [`key:${String(flows[i])}/${key as string}`],
    );
  };
  if (text.includes('sagaflow: step transitions') || text.includes('sagaflow: top-level run finishes')) return runs(0);
  if (text.includes('sagaflow: start with first step')) return [...runs(0), ...starts(1, 4)];
  if (text.includes('sagaflow: starts')) return starts(0, 3);
  return [];
}

/**
 * The database handle with its hot sends watched (review 16, ADR 0077): every statement and round the
 * driver sends, with the runs and business keys it carries and the sends out beside it. `crossed`
 * lists each time a run or a business key went out while a send carrying it was still out: the
 * batcher's rule (a run, or a start's key, is never in two statements at once, ADR 0059) broken.
 * `mostOut` is the most rounds of several statements that were out at once.
 */
export function watchSends(db: Database): {
  db: Database;
  sends: HotSend[];
  crossed: string[];
  mostOut: () => number;
  out: () => HotSend[];
} {
  const sends: HotSend[] = [];
  const crossed: string[] = [];
  let most = 0;
  const out = () => sends.filter((s) => !s.back);
  const went = <T>(round: boolean, statements: readonly RawStatement[], answer: () => Promise<T>): Promise<T> => {
    const keys = statements.flatMap(hotKeys);
    const beside = out();
    for (const key of keys)
      for (const other of beside)
        if (other.keys.includes(key)) crossed.push(`${key} sent (#${sends.length + 1}) while #${other.n} carries it`);
    const at = performance.now();
    const resent =
      keys.length === 0
        ? undefined
        : sends.findLast((s) => s.back && s.failed && keys.every((key) => s.keys.includes(key)));
    const send: HotSend = {
      n: sends.length + 1,
      round,
      keys,
      beside: beside.map((s) => s.n),
      besideAgesMs: beside.map((s) => at - s.origin),
      at,
      origin: resent?.origin ?? at,
      resend: resent !== undefined,
      failed: false,
      back: false,
    };
    sends.push(send);
    most = Math.max(most, out().filter((s) => s.round).length);
    let answered: Promise<T>;
    try {
      answered = answer();
    } catch (err) {
      send.back = true;
      send.failed = true;
      throw err;
    }
    return answered.then(
      (answer) => {
        send.back = true;
        return answer;
      },
      (err: unknown) => {
        send.back = true;
        send.failed = true;
        throw err;
      },
    );
  };
  const { driver } = db;
  return {
    db: {
      ...db,
      driver: {
        ...driver,
        statement: (statement, limits) => went(false, [statement], () => driver.statement(statement, limits)),
        statements:
          driver.statements === undefined
            ? undefined
            : (statements, limits) => went(true, statements, () => driver.statements!(statements, limits)),
      },
    },
    sends,
    crossed,
    mostOut: () => most,
    out,
  };
}

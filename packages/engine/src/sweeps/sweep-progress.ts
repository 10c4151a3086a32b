import type { Logger } from 'pino';

/** The sweeps that report progress (ADR 0026); the metric label and the log's `sweep` field. */
export type SweepName = 'expired_steps' | 'expired_runs' | 'doctor' | 'process_timeouts' | 'outbox';

/** What /metrics shows of one sweep, as this process saw it. */
export interface SweepFigures {
  sweep: SweepName;
  /** Rows this process's passes have handled since it started. */
  rowsTotal: number;
  /** Candidates the last pass left behind (0 when it drained them); null when it did not count them. */
  rowsLeft: number | null;
  /** Rows per second of the last pass that handled any. */
  rowsPerSecond: number;
  lastPassAt: Date | null;
}

/** One pass of one sweep: counts rows, says when its time budget is spent, reports at the end. */
export interface SweepPass {
  readonly done: number;
  add(rows: number): void;
  /** True once the pass has run for its budget: start no new batch. */
  outOfTime(): boolean;
  /** Records and logs the pass; `rowsLeft` null = not counted (the pass did not stop early). */
  end(rowsLeft: number | null): void;
}

export interface SweepProgress {
  start(sweep: SweepName, opts: { budgetMs: number; logger: Logger }): SweepPass;
  figures(): SweepFigures[];
}

/**
 * A pass that handled fewer rows than this and left none behind is routine (a timer or two fired):
 * it logs at debug, so a healthy control plane's info log is not one line per sweep per second.
 */
const SMALL_PASS_ROWS = 100;

/**
 * Progress of the sweeps run in this process: each pass logs rows done, rows left and its rate
 * (a pass that found nothing logs nothing; a small one that drained its candidates logs at debug;
 * one that left a backlog or handled many rows at info), and the figures are kept for /metrics. Rates use the
 * monotonic clock, not business time: they measure this machine, and a test clock would distort them.
 */
export function createSweepProgress(): SweepProgress {
  const figures = new Map<SweepName, SweepFigures>();
  return {
    start(sweep, { budgetMs, logger }) {
      const startedAt = performance.now();
      let done = 0;
      return {
        get done() {
          return done;
        },
        add(rows) {
          done += rows;
          if (rows > 0) logger.debug({ sweep, rows_done: done, batch: rows }, 'sweep batch');
        },
        outOfTime: () => performance.now() - startedAt >= budgetMs,
        end(rowsLeft) {
          const ms = performance.now() - startedAt;
          const f = figures.get(sweep) ?? { sweep, rowsTotal: 0, rowsLeft: null, rowsPerSecond: 0, lastPassAt: null };
          f.rowsTotal += done;
          f.rowsLeft = rowsLeft;
          if (done > 0) f.rowsPerSecond = Math.round((done * 1000) / Math.max(ms, 1));
          f.lastPassAt = new Date();
          figures.set(sweep, f);
          const backlog = rowsLeft !== null && rowsLeft > 0;
          if (done === 0 && !backlog) return;
          const line = {
            sweep,
            rows_done: done,
            rows_left: rowsLeft,
            rows_per_second: f.rowsPerSecond,
            ms: Math.round(ms),
          };
          if (backlog || done >= SMALL_PASS_ROWS) logger.info(line, 'sweep pass');
          else logger.debug(line, 'sweep pass');
        },
      };
    },
    figures: () => [...figures.values()].map((f) => ({ ...f })),
  };
}

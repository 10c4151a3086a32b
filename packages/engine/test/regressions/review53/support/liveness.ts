import type pg from 'pg';
import type { Database } from '../../../../src/index.ts';

/** Review 53: small windows so a lease, a dead worker and a monitor pass all come within seconds. */
export const troubleConfig = {
  worker: {
    concurrency: 4,
    poll_interval_ms: 50,
    lease_seconds: 2,
    heartbeat_interval_ms: 200,
    dead_after_seconds: 2,
    transaction_wait_ms: 50,
    outcome_retry: { max_attempts: 1000, base_delay_ms: 50, max_delay_ms: 300 },
  },
  logging: { anomaly_level: null },
} as const;

/** Checks out every connection of `db`'s pool (size `size`) from the test: the engine gets none until `release`. */
export async function starvePool(db: Database, size: number): Promise<{ release(): void }> {
  const pool = db.pool!;
  const clients: pg.PoolClient[] = [];
  // A connection in use is taken as soon as it comes back: ask for all of them at once.
  const asks = Array.from({ length: size }, () => pool.connect());
  for (const a of asks) clients.push(await a);
  return {
    release() {
      for (const c of clients.splice(0)) c.release();
    },
  };
}

export interface RunState {
  id: string;
  status: string;
  stuck_reason: string | null;
  waiting_for: string | null;
}

const terminal = new Set(['Completed', 'Failed', 'Compensated', 'Cancelled', 'TimedOut', 'Expired', 'Terminated']);

/**
 * The liveness property of review 53: a run is finished, or says why it is not (stuck_reason,
 * waiting_for). Returns the runs that do neither.
 */
export async function silentRuns(db: Database, runIds: readonly string[]): Promise<RunState[]> {
  const rows = await db.prisma.flowRun.findMany({
    where: { id: { in: [...runIds] } },
    select: { id: true, status: true, stuck_reason: true, waiting_for: true },
  });
  return rows.filter((r) => !terminal.has(r.status) && r.stuck_reason === null && r.waiting_for === null);
}

/** Step and compensation outcomes recorded more than once in a run's history (the same row, the same outcome type). */
export async function outcomesRecordedTwice(db: Database, runIds: readonly string[]): Promise<string[]> {
  const events = await db.prisma.flowEvent.findMany({
    where: {
      run_id: { in: [...runIds] },
      type: { in: ['action.completed', 'compensation.completed'] },
    },
    select: { run_id: true, type: true, row_id: true, sequence: true },
  });
  const seen = new Map<string, number>();
  for (const e of events) {
    const k = `${e.run_id}/${e.type}/${e.row_id ?? e.sequence}`;
    seen.set(k, (seen.get(k) ?? 0) + 1);
  }
  return [...seen].filter(([, n]) => n > 1).map(([k, n]) => `${k} x${n}`);
}

/** A gate a step waits on, opened by the test. */
export function gate() {
  let open: () => void = () => undefined;
  const opened = new Promise<void>((r) => (open = r));
  return { opened, open };
}

/** A pino logger at warn that keeps what it logged, so a test can show its trouble really happened. */
export function keptLogger() {
  const lines: { level: number; msg: string; err?: { message?: string } }[] = [];
  return {
    lines,
    stream: { write: (line: string) => void lines.push(JSON.parse(line) as (typeof lines)[number]) },
    count: (re: RegExp) => lines.filter((l) => re.test(l.msg)).length,
  };
}

/** Each distinct log message with how often it came and the first error message it carried. */
export function summary(lines: readonly { msg: string; err?: { message?: string } }[]) {
  const out = new Map<string, { n: number; err?: string }>();
  for (const l of lines) {
    const e = out.get(l.msg) ?? { n: 0, ...(l.err?.message ? { err: l.err.message.slice(0, 200) } : {}) };
    e.n += 1;
    out.set(l.msg, e);
  }
  return Object.fromEntries(out);
}

import type { Database, OutboxLag } from '@sagaflow/engine';
import { readFailingCounts } from '../../metrics/reads/read-failing-counts.ts';
import { readInstanceCounts } from '../../metrics/reads/read-instance-counts.ts';
import { readOutboxFigures } from '../../metrics/reads/read-outbox-figures.ts';
import { readPendingApprovals } from '../../metrics/reads/read-pending-approvals.ts';
import { readStuckCounts } from '../../metrics/reads/read-stuck-counts.ts';
import { withReadSnapshot } from '../../metrics/reads/with-read-snapshot.ts';
import { exactRunCountLimit, readRunStatusCounts } from './read-run-status-counts.ts';

/** One process state's open instances: how many, how many quarantined, and how long the stalest waited. */
export interface StateOverview {
  process: string;
  state: string;
  active: number;
  quarantined: number;
  /**
   * ACTIVE instances here that are failing: a failure record, or a timeout whose delivery keeps
   * throwing (ADR 0127). Counted among `active` too.
   */
  failing: number;
  /** Their timeouts that keep failing. */
  failingTimeouts: number;
  /** Seconds since the stalest ACTIVE instance in this state was updated; null when none. */
  oldestActiveSeconds: number | null;
  /** Seconds since the stalest QUARANTINED one was (its quarantine); null when none. */
  oldestQuarantinedSeconds: number | null;
}

/** What the console's overview shows, read from one snapshot. */
export interface Overview {
  /** ISO time the ages are measured from. */
  at: string;
  /**
   * Per status: exact up to `exactUpTo`; a status with more is an estimate from the planner's
   * statistics and is named in `estimated` (as is `total`, their sum, whenever that list is not empty).
   */
  runs: { total: number; byStatus: Record<string, number>; exactUpTo: number; estimated: string[] };
  stuck: { total: number; byReason: Record<string, number> };
  /** `failing`: ACTIVE instances with a failure record or a failing timeout (ADR 0127), among `active`. */
  instances: {
    active: number;
    quarantined: number;
    failing: number;
    failingTimeouts: number;
    byState: StateOverview[];
  };
  outbox: OutboxLag;
  /** Repair commands waiting for a second operator's approval (ADR 0020). */
  approvals: { pending: number };
}

const secondsSince = (at: Date, then: Date) => Math.max(0, (at.getTime() - then.getTime()) / 1000);

/**
 * The overview counts for the console: runs by status (exact while small, estimated beyond), stuck runs by kind of reason, open process
 * instances by state (active, quarantined, failing (ADR 0127), and the stalest of each, seed 002), and the outbox's lag.
 * The same indexed reads /metrics makes (ADR 0017), in one read-only snapshot bounded by `timeoutMs`,
 * so the numbers agree with each other and with a scrape taken at the same moment.
 *
 * @example
 * const overview = await readOverview(ctx.db, { timeoutMs: 5000 });
 * overview.stuck.byReason.replay_blocked; // runs waiting for matching code
 */
export async function readOverview(
  db: Pick<Database, 'prisma'>,
  options: { timeoutMs?: number; now?: () => Date } = {},
): Promise<Overview> {
  return withReadSnapshot(db, options.timeoutMs ?? 5000, async (tx) => {
    const at = (options.now ?? (() => new Date()))();
    const [runs, stuck, instances] = [
      await readRunStatusCounts(tx),
      await readStuckCounts(tx),
      await readInstanceCounts(tx),
    ];
    const failing = await readFailingCounts(tx);
    const outbox = await readOutboxFigures(tx, at);
    const pendingApprovals = await readPendingApprovals(tx, at);

    const byStatus = Object.fromEntries(runs.filter((r) => r.count > 0).map((r) => [r.status, r.count]));
    const byState = new Map<string, StateOverview>();
    for (const i of instances) {
      const key = JSON.stringify([i.process, i.state]);
      const row = byState.get(key) ?? {
        process: i.process,
        state: i.state,
        active: 0,
        quarantined: 0,
        failing: 0,
        failingTimeouts: 0,
        oldestActiveSeconds: null,
        oldestQuarantinedSeconds: null,
      };
      const age = secondsSince(at, i.stalestUpdatedAt);
      if (i.status === 'QUARANTINED') {
        row.quarantined += i.count;
        row.oldestQuarantinedSeconds = age;
      } else {
        row.active += i.count;
        row.oldestActiveSeconds = age;
      }
      byState.set(key, row);
    }
    for (const f of failing) {
      // Read after the counts in the same snapshot: every failing ACTIVE instance's state has a row.
      const row = byState.get(JSON.stringify([f.process, f.state]));
      if (!row) continue;
      row.failing += f.instances;
      row.failingTimeouts += f.timeouts;
    }
    const states = [...byState.values()];
    return {
      at: at.toISOString(),
      runs: {
        total: runs.reduce((n, r) => n + r.count, 0),
        byStatus,
        exactUpTo: exactRunCountLimit,
        estimated: runs.filter((r) => !r.exact).map((r) => r.status),
      },
      stuck: {
        total: stuck.reduce((n, s) => n + s.count, 0),
        byReason: Object.fromEntries(stuck.map((s) => [s.reason, s.count])),
      },
      instances: {
        active: states.reduce((n, s) => n + s.active, 0),
        quarantined: states.reduce((n, s) => n + s.quarantined, 0),
        failing: states.reduce((n, s) => n + s.failing, 0),
        failingTimeouts: states.reduce((n, s) => n + s.failingTimeouts, 0),
        byState: states,
      },
      outbox,
      approvals: { pending: pendingApprovals },
    };
  });
}

import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { msPerTick, readClusterProcStats } from './read-cpu-times.ts';
import { withPgClient } from './with-pg-client.ts';

/** One process of the cluster at one moment: what it is, and the CPU it has used so far. */
export interface PostgresProcess {
  readonly pid: number;
  /** pg_stat_activity's backend_type, with `@database` for a client backend; `postmaster` or `unlisted` otherwise. */
  readonly kind: string;
  /** Time on a CPU so far (/proc/<pid>/schedstat, nanoseconds: no 10 ms tick rounding). */
  readonly runNs: number;
  /** Time runnable but waiting for a core so far (schedstat's second field): the load of the machine. */
  readonly queuedNs: number;
}

export interface PostgresCpuSnapshot {
  readonly processes: readonly PostgresProcess[];
  /** CPU of the postmaster's children that have exited (its cutime + cstime): autovacuum workers, closed backends. */
  readonly exitedChildrenMs: number;
}

/**
 * Every process of the cluster whose postmaster.pid is in `dataDir`, named by pg_stat_activity (read
 * on `adminUrl`, so the reading connection itself shows as a client backend of the admin database),
 * with its CPU from /proc. A child that exits between two snapshots takes its time into the
 * postmaster's `exitedChildrenMs` (the kernel adds a reaped child's CPU to its parent's cutime).
 */
export async function readPostgresCpu(dataDir: string, adminUrl: string): Promise<PostgresCpuSnapshot> {
  const kinds = await withPgClient(adminUrl, async (c) => {
    const result = await c.query<{ pid: number; kind: string }>(
      `select pid, case when backend_type = 'client backend' then 'client backend@' || coalesce(datname, '?')
                        else backend_type end as kind
         from pg_stat_activity`,
    );
    return new Map(result.rows.map((r) => [r.pid, r.kind]));
  });
  const processes: PostgresProcess[] = [];
  let exitedChildrenMs = 0;
  for (const stat of await readClusterProcStats(dataDir)) {
    const sched = readSchedstat(stat.pid);
    if (sched === null) continue;
    if (stat.postmaster) exitedChildrenMs = stat.childTicks * msPerTick;
    const kind = stat.postmaster ? 'postmaster' : (kinds.get(stat.pid) ?? 'unlisted');
    processes.push({ pid: stat.pid, kind, runNs: sched.runNs, queuedNs: sched.queuedNs });
  }
  return { processes, exitedChildrenMs };
}

/** CPU ms and queued ms per kind between two snapshots; a process absent from `before` counts from zero. */
export function cpuByKind(
  before: PostgresCpuSnapshot,
  after: PostgresCpuSnapshot,
): { kind: string; cpuMs: number; queuedMs: number; processes: number }[] {
  const was = new Map(before.processes.map((p) => [p.pid, p]));
  const byKind = new Map<string, { cpuMs: number; queuedMs: number; processes: number }>();
  for (const p of after.processes) {
    const b = was.get(p.pid);
    const row = byKind.get(p.kind) ?? { cpuMs: 0, queuedMs: 0, processes: 0 };
    row.cpuMs += (p.runNs - (b?.runNs ?? 0)) / 1e6;
    row.queuedMs += (p.queuedNs - (b?.queuedNs ?? 0)) / 1e6;
    row.processes += 1;
    byKind.set(p.kind, row);
  }
  byKind.set('exited children (autovacuum workers...)', {
    cpuMs: after.exitedChildrenMs - before.exitedChildrenMs,
    queuedMs: 0,
    processes: 0,
  });
  return [...byKind].map(([kind, r]) => ({ kind, ...r })).sort((a, b) => b.cpuMs - a.cpuMs);
}

/** A process's time on a CPU and queued for one so far, in ns (/proc/<pid>/schedstat); null once it is gone. */
export function readSchedstat(pid: number): { runNs: number; queuedNs: number } | null {
  try {
    const [run, queued] = readFileSync(join('/proc', String(pid), 'schedstat'), 'utf8')
      .trim()
      .split(' ');
    return { runNs: Number(run), queuedNs: Number(queued) };
  } catch {
    return null;
  }
}

import { readFileSync } from 'node:fs';
import { readdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';

/** Linux reports process CPU time in clock ticks; USER_HZ is 100 on every mainstream build. */
export const msPerTick = 10;

/** CPU time used so far, in milliseconds: this Node process, the PostgreSQL server, the whole machine. */
export interface CpuTimes {
  readonly nodeMs: number;
  /** Null when /proc or the cluster's postmaster.pid cannot be read. */
  readonly postgresMs: number | null;
  /** Every CPU's non-idle time (/proc/stat); null when unreadable. */
  readonly machineMs: number | null;
}

/**
 * Reads CPU time from the kernel: `process.cpuUsage()` for this process (all its threads), and
 * utime+stime from /proc for the postmaster of `dataDir` and its children (backends, WAL writer,
 * autovacuum...). Backends that exit take their time with them, so read before closing a pool.
 */
export async function readCpuTimes(dataDir: string): Promise<CpuTimes> {
  const usage = process.cpuUsage();
  const [postgresMs, machineMs] = await Promise.all([readPostgresCpuMs(dataDir), readMachineBusyMs()]);
  return { nodeMs: (usage.user + usage.system) / 1000, postgresMs, machineMs };
}

async function readMachineBusyMs(): Promise<number | null> {
  try {
    // cpu  user nice system idle iowait irq softirq steal ...
    const fields = ((await readFile('/proc/stat', 'utf8')).split('\n')[0] ?? '').trim().split(/\s+/).slice(1, 9);
    const ticks = fields.map(Number);
    const busy = ticks.reduce((a, b) => a + b, 0) - (ticks[3] ?? 0) - (ticks[4] ?? 0);
    return Number.isFinite(busy) ? busy * msPerTick : null;
  } catch {
    return null;
  }
}

async function readPostgresCpuMs(dataDir: string): Promise<number | null> {
  try {
    let ticks = 0;
    for (const stat of await readClusterProcStats(dataDir)) ticks += stat.ticks;
    return ticks * msPerTick;
  } catch {
    return null;
  }
}

/** What /proc/<pid>/stat says of a process: its parent, and its own and its reaped children's CPU ticks. */
export interface ProcStat {
  readonly pid: number;
  readonly ppid: number;
  /** utime + stime, in clock ticks. */
  readonly ticks: number;
  /** cutime + cstime: children that exited and were reaped, in clock ticks. */
  readonly childTicks: number;
}

/**
 * The postmaster of the cluster whose postmaster.pid is in `dataDir` and its children (backends, WAL
 * writer, autovacuum...), as /proc shows them now. Throws when postmaster.pid cannot be read.
 */
export async function readClusterProcStats(dataDir: string): Promise<(ProcStat & { postmaster: boolean })[]> {
  const postmaster = Number((await readFile(join(dataDir, 'postmaster.pid'), 'utf8')).split('\n')[0]);
  const found: (ProcStat & { postmaster: boolean })[] = [];
  for (const entry of await readdir('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    const stat = readProcStat(Number(entry));
    if (stat === null || (stat.pid !== postmaster && stat.ppid !== postmaster)) continue;
    found.push({ ...stat, postmaster: stat.pid === postmaster });
  }
  return found;
}

/** CPU time (utime + stime) used so far by process `pid` alone, in milliseconds; null once it is gone. */
export async function readProcessCpuMs(pid: number): Promise<number | null> {
  const stat = readProcStat(pid);
  return stat === null ? null : stat.ticks * msPerTick;
}

/**
 * Synchronous on purpose: a /proc read is served by the kernel in microseconds, while an async read
 * waits for a libuv pool thread to be scheduled, which on a loaded machine made one scan of a few
 * hundred processes take seconds and stretched the windows that CPU is read at the edges of.
 */
function readProcStat(pid: number): ProcStat | null {
  let stat;
  try {
    stat = readFileSync(join('/proc', String(pid), 'stat'), 'utf8');
  } catch {
    return null;
  }
  // Fields after the parenthesised command name: state(3) ppid(4) ... utime(14) stime(15) cutime(16) cstime(17).
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return {
    pid,
    ppid: Number(fields[1]),
    ticks: Number(fields[11]) + Number(fields[12]),
    childTicks: Number(fields[13]) + Number(fields[14]),
  };
}

/** CPU used between two readings, as cores busy on average over `wallMs`; `other` is the rest of the machine. */
export function coresBusy(before: CpuTimes, after: CpuTimes, wallMs: number): CoresBusy {
  const delta = (from: number | null, to: number | null) =>
    from === null || to === null ? null : (to - from) / wallMs;
  const node = (after.nodeMs - before.nodeMs) / wallMs;
  const postgres = delta(before.postgresMs, after.postgresMs);
  const machine = delta(before.machineMs, after.machineMs);
  const other = machine === null || postgres === null ? null : Math.max(0, machine - node - postgres);
  return { node, postgres, other };
}

export interface CoresBusy {
  readonly node: number;
  readonly postgres: number | null;
  /** Everything else on the machine (other people's tests, say): noise in the figures when high. */
  readonly other: number | null;
}

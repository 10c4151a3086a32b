import { readdirSync, readFileSync } from 'node:fs';

/** Linux reports thread CPU time in clock ticks; USER_HZ is 100 on every mainstream build. */
const msPerTick = 10;

/** This process's CPU time so far, in milliseconds: the main (JavaScript) thread, and all its other threads. */
export interface ThreadCpu {
  readonly mainMs: number;
  /** V8's platform workers (background compilation, concurrent and parallel GC) and libuv's pool. */
  readonly otherMs: number;
}

/**
 * Reads utime+stime of every thread of this process from /proc/self/task, the main thread apart.
 * process.cpuUsage() sums them all, so a phase measured while V8 still compiles the hot path on its
 * background threads, a few seconds into a fresh process, counts that compilation per flow (ADR
 * 0058). Null where /proc cannot be read.
 */
export function splitCpuByThread(): ThreadCpu | null {
  let mainMs = 0;
  let otherMs = 0;
  try {
    for (const tid of readdirSync('/proc/self/task')) {
      let stat: string;
      try {
        stat = readFileSync(`/proc/self/task/${tid}/stat`, 'utf8');
      } catch {
        continue; // the thread ended between the listing and the read
      }
      // Fields after the parenthesised command name: state ppid ... utime(14th) stime(15th).
      const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      const ms = (Number(fields[11]) + Number(fields[12])) * msPerTick;
      if (tid === String(process.pid)) mainMs += ms;
      else otherMs += ms;
    }
  } catch {
    return null;
  }
  return { mainMs, otherMs };
}

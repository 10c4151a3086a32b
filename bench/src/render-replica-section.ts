import { fixed, markdownTable } from './markdown-table.ts';
import type { ReplicaResult } from './run-replica-phase.ts';

/** A machine this busy (share of its cores) has no CPU left for another worker process to use. */
const saturated = 0.9;

/**
 * The scale-out table: flows/s per number of worker processes, its growth over one process, and
 * where the machine's CPU went, with a plain sentence when the CPU was the ceiling.
 */
export function renderReplicaSection(results: readonly ReplicaResult[], server: string): string {
  const one = results.find((r) => r.processes === 1)?.flowsPerSecond;
  const cores = results[0]?.machineCores ?? 0;
  const table = markdownTable(
    [
      'worker processes',
      'worker slots',
      'flows/s',
      'growth over 1 process',
      'fewest open runs in the window',
      `cores busy: workers / starter / PostgreSQL / other (machine, of ${cores})`,
      'errors the workers logged',
      'fork → ready (s)',
    ],
    results.map((r) => [
      String(r.processes),
      `${r.processes} × ${r.concurrencyPerProcess}`,
      fixed(r.flowsPerSecond, 0),
      one ? `${fixed(r.flowsPerSecond / one, 2)}×` : '–',
      `${r.minOpen} of ${r.backlog}`,
      `${fixed(r.cores.workers, 2)} / ${fixed(r.cores.starter, 2)} / ${fixed(r.cores.postgres, 2)} / ${fixed(r.cores.other, 2)} (${fixed(r.cores.machine, 2)})`,
      String(r.workerErrors),
      fixed(r.startupMs / 1000, 1),
    ]),
  );
  return [
    '### Scale-out: worker processes against one PostgreSQL (durable commits)',
    '',
    `Server: ${server}.`,
    '',
    table,
    '',
    ...cpuVerdict(results),
    'Each row: a fresh clone of the migrated template; `n` child processes (bench/src/replica-worker.ts), each an engine with ' +
      'startWorkers() on its own connection pool; a starter in a process of its own (bench/src/replica-starter.ts: an engine that never starts workers, and the observer counting finished runs) keeps ' +
      'the backlog of started-but-unfinished runs full. The window opens once every worker slot has had about one run ' +
      'finished after all processes were ready, and the warm-up time passed; flows/s = runs whose engine-recorded ' +
      'finished_at falls in the window ÷ the window, which spans the CPU readings at its edges (seconds on a busy machine) so flows and CPU cover the same time. "Fewest open runs" below the worker slots means the starter, not the ' +
      'workers, was short. CPU: utime+stime from /proc of the worker processes, the starter and bench processes (the "starter" column), the postmaster and its ' +
      'children, and the whole machine (/proc/stat), over the window; "other" is what none of those used. Errors: what the ' +
      "worker processes' engines logged at error level over the whole phase (counted in each process, reported on exit); " +
      'each is a job that failed (on a starved machine, mostly Prisma giving up on starting a transaction) and whose run ' +
      'waits out the job lease before another worker retries it, so errors lower flows/s.',
  ].join('\n');
}

function cpuVerdict(results: readonly ReplicaResult[]): string[] {
  const lines: string[] = [];
  const ratio = (n: number) => {
    const one = results.find((r) => r.processes === 1)?.flowsPerSecond;
    const r = results.find((p) => p.processes === n)?.flowsPerSecond;
    return one && r !== undefined ? `${fixed(r / one, 2)}×` : null;
  };
  const growth = [2, 4].map((n) => [n, ratio(n)] as const).filter(([, r]) => r !== null);
  if (growth.length > 0) lines.push(`Growth: ${growth.map(([n, r]) => `${n} processes ÷ 1 = ${r}`).join(', ')}.`, '');
  const busiest = results.reduce<ReplicaResult | null>(
    (worst, r) => ((r.cores.machine ?? 0) > (worst?.cores.machine ?? -1) ? r : worst),
    null,
  );
  if (busiest && busiest.cores.machine !== null && busiest.cores.machine >= saturated * busiest.machineCores) {
    lines.push(
      `**The machine has ${busiest.machineCores} cores and they were ${fixed(busiest.cores.machine, 2)} busy at ` +
        `${busiest.processes} process(es): the CPU is the ceiling here, so more processes share the same cores and the ` +
        'figures say how the engine degrades under CPU contention, not how it scales on more machines.**',
      '',
    );
  }
  const other = Math.max(0, ...results.map((r) => r.cores.other ?? 0));
  if (other >= 0.2) {
    lines.push(
      `**Other processes kept up to ${fixed(other, 2)} cores busy during these windows: the rates are lower than on a quiet machine.**`,
      '',
    );
  }
  return lines;
}

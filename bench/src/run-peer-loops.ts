import type { WorkerPoolCounters } from '@sagaflow/engine';
import { exitOf, forkBenchChild } from './fork-bench-child.ts';
import type { PeerSystem } from './peer-system.ts';
import type { ClosedLoopResult } from './run-closed-loop.ts';

/** What peer-phase-child.ts is told: which system, on which database, and its loops. */
export interface PeerLoopsSpec {
  readonly system: PeerSystem['name'];
  /** Sagaflow's `worker.notify` (`--no-notify`); DBOS ignores it. */
  readonly notify: boolean;
  readonly url: string;
  readonly concurrency: number;
  readonly warmupMs: number;
  /** Flows the first warm-up runs at least (before its ANALYZE), however long that takes. */
  readonly warmupFlows: number;
  readonly measureMs: number;
}

export type PeerLoopsMessage =
  | { kind: 'warm'; warmup: ClosedLoopResult }
  | { kind: 'measured'; loop: ClosedLoopResult; nodeMs: number; poolCounters: WorkerPoolCounters | null };

/** A phase's loops as the child ran them: the measured one with the child's CPU time over it. */
export interface PeerLoops {
  readonly warmup: ClosedLoopResult;
  readonly loop: ClosedLoopResult;
  readonly nodeMs: number;
  readonly poolCounters: WorkerPoolCounters | null;
}

/**
 * Runs a phase's warm-up and measured loop in a process of its own (peer-phase-child.ts), so each
 * system is measured alone, as its clients run it: a system loaded in the harness's process leaves
 * behind what it set up (DBOS's AsyncLocalStorage hooks stay on every promise after its shutdown and
 * cost Sagaflow about a third more Node CPU per flow at c = 1, ADR 0049). `edge` runs between the
 * warm-up and the measured loop, and again right after it, before the child closes the system (the
 * server's CPU is read there). Fails if
 * the child exits before it sent its loop; its output goes to this process's stderr.
 */
export async function runPeerLoops(spec: PeerLoopsSpec, edge: () => Promise<void>): Promise<PeerLoops> {
  const child = forkBenchChild(new URL('./peer-phase-child.ts', import.meta.url), [JSON.stringify(spec)]);
  let warmup: ClosedLoopResult | undefined;
  let measured: Extract<PeerLoopsMessage, { kind: 'measured' }> | undefined;
  let failed: Error | undefined;
  let edges = Promise.resolve();
  child.on('message', (message: PeerLoopsMessage) => {
    if (message.kind === 'warm') {
      warmup = message.warmup;
      edges = edges.then(edge).then(
        () => void child.send('go'),
        (err: Error) => {
          failed = err;
          child.kill('SIGKILL');
        },
      );
    } else {
      measured = message;
      edges = edges
        .then(edge)
        .catch((err: Error) => void (failed = err))
        .then(() => void child.send('close'));
    }
  });
  const exit = await exitOf(child);
  await edges;
  if (failed !== undefined) throw failed;
  if (warmup === undefined || measured === undefined || exit !== 'code 0')
    throw new Error(`the ${spec.system} phase's process ${child.pid} exited (${exit}) before it sent its loops`);
  return { warmup, loop: measured.loop, nodeMs: measured.nodeMs, poolCounters: measured.poolCounters };
}

import { percentile } from './percentile.ts';

/** What a closed loop saw: one latency per flow, and the time from the first start to the last finish. */
export interface ClosedLoopResult {
  readonly flows: number;
  readonly latenciesMs: number[];
  readonly windowMs: number;
}

/**
 * `concurrency` clients, each running one flow at a time back to back (start it, wait until it
 * finished, start the next) until `forMs` have passed since the first start; flows in flight then
 * finish and are counted. Latency is the client's view: the call that starts a flow to the moment
 * its completion is known. `runOne` gets a sequence number unique within the loop. With
 * `atLeastFlows`, the clients also go on until that many flows have started: a warm-up that must leave
 * tables of a size, whatever the machine's speed.
 */
export async function runClosedLoop(
  concurrency: number,
  forMs: number,
  runOne: (n: number) => Promise<void>,
  { atLeastFlows = 0 }: { atLeastFlows?: number } = {},
): Promise<ClosedLoopResult> {
  const latenciesMs: number[] = [];
  let next = 0;
  const startedAt = performance.now();
  const client = async () => {
    while (performance.now() - startedAt < forMs || next < atLeastFlows) {
      const n = next++;
      const t = performance.now();
      await runOne(n);
      latenciesMs.push(performance.now() - t);
    }
  };
  await Promise.all(Array.from({ length: concurrency }, client));
  return { flows: latenciesMs.length, latenciesMs, windowMs: performance.now() - startedAt };
}

/** A phase's headline figures from its warm-up and measured loops, the same for every system and store. */
export interface ClosedLoopFigures {
  readonly warmupFlows: number;
  /** Flows in the measured window (after warm-up). */
  readonly flows: number;
  readonly windowMs: number;
  readonly flowsPerSecond: number;
  readonly latencyP50Ms: number;
  readonly latencyP99Ms: number;
}

export function closedLoopFigures(warmup: ClosedLoopResult, loop: ClosedLoopResult): ClosedLoopFigures {
  return {
    warmupFlows: warmup.flows,
    flows: loop.flows,
    windowMs: loop.windowMs,
    flowsPerSecond: (loop.flows * 1000) / loop.windowMs,
    latencyP50Ms: percentile(loop.latenciesMs, 50),
    latencyP99Ms: percentile(loop.latenciesMs, 99),
  };
}

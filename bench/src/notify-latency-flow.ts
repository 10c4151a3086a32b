/** The flow measure-notify-latency.ts starts and its worker process runs (one step). */
export const latencyFlowName = 'latency.one-step';

/** What the worker process reports when a run's first step begins (wall clock, ms since the epoch). */
export interface FirstStep {
  readonly key: string;
  readonly at: number;
}

import type { WorkerPoolCounters } from '@sagaflow/engine';

/**
 * A worker pool's counters as labelled figures, in the order a reader follows a flow through the
 * pool: how starts got in (hand-offs, and refusals by why), what woke the loop, what it claimed.
 */
export function labelPoolCounters(c: WorkerPoolCounters): [label: string, count: number][] {
  return [
    ['hand-offs', c.handOffs],
    ['hand-offs refused: a wake was queued', c.handOffsRefused.queued],
    ['hand-offs refused: no claim for 2 polls', c.handOffsRefused.stale],
    ['hand-offs refused: pool full', c.handOffsRefused.full],
    ['hand-offs refused: pool stopping', c.handOffsRefused.stopped],
    ['notifications heard: own', c.notifications.own],
    ["notifications heard: others'", c.notifications.others],
    ['polls (interval ran out)', c.polls],
    ['job claims', c.claims],
    ['job claims that leased nothing', c.emptyClaims],
    ['jobs claimed', c.jobsClaimed],
    ['jobs given back', c.jobsGivenBack],
    ['looks at the queue with every slot taken', c.looks],
    ['looks that found a due job', c.looksFindingWork],
  ];
}

import type { Prisma, PrismaClient } from '../generated/prisma/client.ts';

/** Either the client or an open interactive transaction: store statements accept both. */
export type Db = PrismaClient | Prisma.TransactionClient;

/** Flow run statuses. Terminal ones are never overwritten. */
export const terminalRunStatuses = [
  'Completed',
  'Failed',
  'Compensated',
  'Expired',
  'Cancelled',
  'Terminated',
  'TimedOut',
] as const;
export const openRunStatuses = ['Pending', 'Running', 'Waiting', 'Compensating'] as const;
export type RunStatus = (typeof terminalRunStatuses)[number] | (typeof openRunStatuses)[number];

/**
 * Step row statuses. `Failed` is the state between an action's own retries (claimable again once
 * its retry time comes); `Errored` is the terminal failure; `Waiting` is a signal/timer/child wait.
 */
export type StepStatus =
  'Pending' | 'Running' | 'Failed' | 'Waiting' | 'Completed' | 'Errored' | 'Expired' | 'Cancelled';

/** An action step not over yet: not run, running, or between its own retries (`openStepStatusesSql` in SQL). */
export const openActionStepStatuses: readonly string[] = ['Pending', 'Running', 'Failed'];

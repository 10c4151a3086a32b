import type { Logger } from 'pino';
import type { Prisma, PrismaClient } from '../generated/prisma/client.ts';
import type { Clock } from '../runtime/clock.ts';
import { EngineError } from '../errors/engine-error.ts';
import type { InputLimits } from '../input/input-limits.ts';
import type { ProcessDefinition } from './define-process.ts';
import type { StoreRetryPolicy } from './store-retry.ts';
import type { SweepProgress } from '../sweeps/sweep-progress.ts';

/** Test-kit faults inside the deliver transaction; never set in production. */
export interface ProcessFaults {
  /** After the instance row is locked and read: e.g. hold a handler so a rival overlaps it. */
  afterLock?: (ctx: { instanceId: string; messageId: string }) => Promise<void> | void;
  /** After the outbox rows are inserted, before the inbox and history rows: throw to roll it all back. */
  afterOutbox?: (tx: Prisma.TransactionClient, ctx: { instanceId: string; messageId: string }) => Promise<void> | void;
  /** Before a failure record is written (the store failing then: nothing is recorded, the next failure tries again). */
  beforeFailureRecord?: (ctx: { messageId: string }) => Promise<void> | void;
}

/** What the process-manager operations need, built once. */
export interface ProcessDeps {
  prisma: PrismaClient;
  definitions: ReadonlyMap<string, ProcessDefinition>;
  clock: Clock;
  logger: Logger;
  /** Null: quarantine is off. */
  quarantineAfterMs: number | null;
  storeRetry: StoreRetryPolicy;
  /** What messages, operator commands and releases may carry (engine config `limits`, ADR 0013). */
  limits: InputLimits;
  /** A failing timeout's first retry delay; each later one doubles, up to `timeoutRetryMaxMs` (ADR 0127). */
  timeoutRetryMs: number;
  timeoutRetryMaxMs: number;
  transactionTimeoutMs: number;
  /** The timeout scheduler stops claiming after this long in one pass (sweeps.pass_budget_ms). */
  sweepBudgetMs: number;
  progress: SweepProgress;
  faults: ProcessFaults;
  sleep: (ms: number) => Promise<unknown>;
}

export function definitionOf(deps: ProcessDeps, process: string | ProcessDefinition): ProcessDefinition {
  const name = typeof process === 'string' ? process : process.name;
  const def = deps.definitions.get(name);
  if (!def) throw new EngineError('unknown_process', `no process named "${name}" is registered`);
  return def;
}

/** Runs `work` in one transaction with the configured wait and hold limits. */
export function inTransaction<T>(deps: ProcessDeps, work: (tx: Prisma.TransactionClient) => Promise<T>): Promise<T> {
  return deps.prisma.$transaction(work, {
    maxWait: deps.transactionTimeoutMs,
    timeout: deps.transactionTimeoutMs,
  });
}

import type { Logger } from 'pino';
import type { Prisma, PrismaClient } from '../generated/prisma/client.ts';
import type { Clock } from '../runtime/clock.ts';
import { EngineError } from '../errors/engine-error.ts';
import type { InputLimits } from '../input/input-limits.ts';
import type { ProcessDefinition } from './define-process.ts';
import { codesOf, type StoreRetryPolicy } from './store-retry.ts';
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
  /** These deps write in a host's open transaction (`deliver(…, { tx })`): the engine's transactions are its savepoints. */
  inHostTransaction?: boolean;
  /** The engine's own client, where `prisma` is a host's transaction: what must stay whatever the host decides (the anomaly journal). */
  journal?: PrismaClient;
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

/**
 * Runs `work` in one transaction with the configured wait and hold limits. The database enforces them
 * too (local to the transaction, {@link limitTransaction}): a statement runs at most the limit, and a
 * row another session holds (an instance a host transaction, a release or an operator's psql keeps) is
 * waited for at most half of it. Prisma's own timeout does not cancel a statement waiting on a lock: a
 * delivery to a held instance hung for as long as the row was held, keeping its connection from the
 * other instances' deliveries (review 54). Half, so that a delivery queued for a connection behind
 * deliveries waiting on one held row gets one before its own wait runs out.
 *
 * Inside a host's transaction (`deps.inHostTransaction`, `deliver(…, { tx })`) the engine's transaction
 * is a savepoint, and a setting made local in a released savepoint stays for the rest of the host's
 * transaction: there the host's own two settings are read first and put back once `work` is done
 * (review 55). A savepoint rolled back puts them back by itself.
 */
export function inTransaction<T>(
  deps: ProcessDeps,
  work: (tx: Prisma.TransactionClient) => Promise<T>,
  /** How long the whole transaction may hold its connection, when more than the limit (a release, ADR 0134). */
  holdMs?: number,
): Promise<T> {
  const limitMs = deps.transactionTimeoutMs;
  return deps.prisma.$transaction(
    async (tx) => {
      if (!deps.inHostTransaction) {
        await limitTransaction(tx, limitMs);
        return work(tx);
      }
      const [host] = await tx.$queryRaw<{ statement: string; lock: string }[]>`
        select current_setting('statement_timeout') as statement, current_setting('lock_timeout') as lock`;
      await limitTransaction(tx, limitMs);
      const result = await work(tx);
      await tx.$queryRaw`select set_config('statement_timeout', ${host!.statement}, true), set_config('lock_timeout', ${host!.lock}, true)`;
      return result;
    },
    { maxWait: limitMs, timeout: Math.max(limitMs, holdMs ?? 0) },
  );
}

/** How long a transaction under `limitMs` waits for a row another session holds: half of it, at least 50 ms. */
export function lockWaitMs(limitMs: number): number {
  return Math.max(50, Math.floor(limitMs / 2));
}

/**
 * Bounds the rest of transaction `tx` in the database, local to it: a statement runs at most `limitMs`
 * (`statement_timeout`, 57014) and a row another session holds is waited for at most half of it
 * (`lock_timeout`, 55P03; at least 50 ms), or `lockMs` when given (a bulk's later items, ADR 0132's
 * addendum). Process transactions (ADR 0131 §3) and operators' repairs (review 55) run under it;
 * {@link isHeldUp} tells its two errors.
 */
export async function limitTransaction(
  tx: Prisma.TransactionClient,
  limitMs: number,
  lockMs: number = lockWaitMs(limitMs),
): Promise<void> {
  await tx.$queryRaw`select set_config('statement_timeout', ${String(limitMs)}, true), set_config('lock_timeout', ${String(lockMs)}, true)`;
}

/**
 * The `target_busy` error of a command whose transaction gave up on a row another session held
 * ({@link isHeldUp}): it names the command and its target (`what`), the two limits, and says nothing
 * changed (`audited`: nor was it audited) and to send it again once the other session lets go (ADR 0132, 0134).
 */
export function targetBusyError(
  what: string,
  limits: { lockWaitMs: number; limitMs: number },
  err: unknown,
  audited = false,
): EngineError {
  return new EngineError(
    'target_busy',
    `${what}: another session held a row it needed past ${limits.lockWaitMs} ms, or a statement ran past ` +
      `${limits.limitMs} ms (processes.transaction_timeout_ms); nothing changed${audited ? ' and nothing was audited' : ''}. ` +
      'Send the same command again once the other session lets go (an open transaction on it: see pg_stat_activity)',
    { cause: err },
  );
}

/**
 * Did the transaction give up waiting for a row another session holds (lock_timeout, 55P03), or a
 * statement run out of the transaction's limit (statement_timeout, 57014)? Then nothing was written, and
 * it says nothing about the message: it is not recorded as the instance's failure (seed 002 counts the
 * handler's failures), and the caller (a broker) delivers it again later.
 */
export function isHeldUp(err: unknown): boolean {
  return (
    isLockWaitGivenUp(err) ||
    codesOf(err).includes('57014') ||
    /canceling statement due to statement timeout/.test(messageOf(err))
  );
}

/** Did a statement give up waiting for a row another session holds (lock_timeout, 55P03)? */
export function isLockWaitGivenUp(err: unknown): boolean {
  return codesOf(err).includes('55P03') || /canceling statement due to lock timeout/.test(messageOf(err));
}

const messageOf = (err: unknown) => (err instanceof Error ? err.message : '');

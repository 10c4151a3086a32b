import type { Prisma } from '../generated/prisma/client.ts';
import { rawDb, type RawDb, type RawResult, type RawStatement } from '../db/raw-db.ts';
import type { SqlDriver } from '../db/database.ts';
import type { RuntimeDeps } from './runtime-deps.ts';

/** How long a run transaction may stay open: Prisma's default `timeout`, which these transactions had before ADR 0039. */
export const runTransactionTimeoutMs = 5_000;

/**
 * Runs one of a run's transactions (a replay's load, claim, outcome, park or finish). Its statements
 * go through the database driver on one connection, prepared by name, without Prisma's runtime
 * (ADR 0039), unless a `stepClaimed` hook is installed, which takes a Prisma transaction: then the
 * whole run goes through Prisma's `$transaction`, as before. Either way the transaction waits for a
 * connection for `worker.transaction_wait_ms`, instead of Prisma's 2 s, and stays open at most
 * {@link runTransactionTimeoutMs}. When no connection came in time (Prisma's P2028 "Unable to start a
 * transaction", or the pool's own connection timeout), the transaction never began and nothing of
 * `work` ran, so it is started again, with a warning, for up to the job's lease: a busy pool makes
 * the run wait, it no longer fails the job and leaves the run to wait out its lease (the bench's
 * scale-out counted 12 such failures). Any other error is thrown.
 */
export async function inRunTransaction<T>(deps: RuntimeDeps, work: (tx: RawDb) => Promise<T>): Promise<T> {
  const { transaction_wait_ms: waitMs } = deps.config.worker;
  const { driver } = deps;
  const begin =
    driver && !deps.hooks.stepClaimed
      ? () =>
          driver.transaction((session) => work(rawDb((statement) => session.raw(statement))), {
            waitMs,
            timeoutMs: runTransactionTimeoutMs,
          })
      : () => deps.prisma.$transaction(work, { maxWait: waitMs, timeout: runTransactionTimeoutMs });
  return waitingForConnection(deps, begin);
}

/**
 * Sends one autocommitted statement of a run's (a fused step transition or finish, ADR 0042), or of
 * several runs' (ADR 0045), through the driver, prepared by name like the run transactions'
 * statements, waiting for a connection for `worker.transaction_wait_ms` and again while none comes,
 * as {@link inRunTransaction} does. Only where `deps.driver` is set.
 */
export function sendRunStatement(
  deps: RuntimeDeps & { driver: SqlDriver },
  statement: RawStatement,
): Promise<RawResult> {
  const { driver } = deps;
  const waitMs = deps.config.worker.transaction_wait_ms;
  return waitingForConnection(deps, () => driver.statement(statement, { waitMs }));
}

/**
 * Starts `begin` again while it fails for want of a connection, for up to the job's lease (also the
 * bound of an operator's command, ADR 0078), warning with `message` each time.
 */
export async function waitingForConnection<T>(
  deps: RuntimeDeps,
  begin: () => Promise<T>,
  message = 'no database connection for a run transaction in time; waiting again',
): Promise<T> {
  const { transaction_wait_ms: waitMs, lease_seconds: leaseSeconds } = deps.config.worker;
  const startedAt = performance.now();
  for (let attempt = 1; ; attempt++) {
    try {
      return await begin();
    } catch (err) {
      const waitedMs = performance.now() - startedAt;
      if (!isNoConnectionInTime(err) || waitedMs >= leaseSeconds * 1_000) throw err;
      deps.logger.warn({ attempt, waitedMs: Math.round(waitedMs), transactionWaitMs: waitMs }, message);
    }
  }
}

/**
 * The Prisma transaction a run transaction runs in when a hook that takes one is installed (see
 * {@link inRunTransaction}): the raw client is never used then, so anything else is an engine bug.
 */
export function prismaTransactionOf(tx: RawDb): Prisma.TransactionClient {
  if (!('flowRun' in tx))
    throw new Error('a Prisma transaction was expected: the run transaction went through the driver');
  return tx as Prisma.TransactionClient;
}

/** Prisma's and node-postgres's words for "the pool gave no connection in time"; causes are walked. */
const noConnectionText = /Unable to start a transaction in the given time|timeout exceeded when trying to connect/;

/**
 * Did the call fail before anything was sent, for want of a pooled connection in time (pg-pool's
 * connect timeout, Prisma's "Unable to start a transaction in the given time", the engine's own wait)?
 * Then nothing was written and the call can be sent again; a host's HTTP handler answers it as 503.
 * The error's `cause` chain is followed.
 */
export function isNoConnectionInTime(err: unknown, seen = new Set<unknown>()): boolean {
  if (typeof err !== 'object' || err === null || seen.has(err)) return false;
  seen.add(err);
  const e = err as { message?: unknown; cause?: unknown };
  if (typeof e.message === 'string' && noConnectionText.test(e.message)) return true;
  return isNoConnectionInTime(e.cause, seen);
}

/**
 * A statement an operator's command sends outside its transaction (a read before it, an audit row of a
 * refusal): it waits for a pooled connection as the transaction does, starting again while none came,
 * up to `worker.lease_seconds` (nothing of it was sent then). Before, such a read on a busy pool threw
 * the pool's connect timeout (5 s) where the command's transaction would have waited (CI, 200 repairs at
 * once on a loaded machine).
 */
export function operatorStatement<T>(deps: RuntimeDeps, send: () => Promise<T>): Promise<T> {
  return waitingForConnection(deps, send, 'no database connection for an operator command in time; waiting again');
}

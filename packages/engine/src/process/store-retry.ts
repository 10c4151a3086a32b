import { setTimeout as sleep } from 'node:timers/promises';

/** How store statements are retried on transient database errors before they count as failures. */
export interface StoreRetryPolicy {
  /** Total attempts, the first included: 1 means no retry. */
  maxAttempts: number;
  baseDelayMs: number;
  maxDelayMs: number;
}

/** Seed 002's default: back off from 100 ms up to 2 s, give up after ten attempts. */
export const defaultStoreRetry: StoreRetryPolicy = { maxAttempts: 10, baseDelayMs: 100, maxDelayMs: 2000 };
export const noStoreRetry: StoreRetryPolicy = { maxAttempts: 1, baseDelayMs: 0, maxDelayMs: 0 };

/** SQLSTATEs worth retrying: serialization failure, deadlock, and the connection-exception class. */
const transientSqlStates = new Set(['40001', '40P01', '57P01', '57P02', '57P03', '53300']);
const transientNodeCodes = new Set(['ECONNRESET', 'ECONNREFUSED', 'EPIPE', 'ETIMEDOUT', 'ENOTFOUND', 'EAI_AGAIN']);
/** Prisma's own codes for the same things: write conflict/deadlock, can't reach, closed, timed out. */
const transientPrismaCodes = new Set(['P2034', 'P1001', 'P1002', 'P1008', 'P1017']);
const transientText =
  /could not serialize access|deadlock detected|connection terminated|connection refused|server closed the connection|has encountered a connection error and is not queryable/i;

/** Every code on the error and its cause chain (SQLSTATEs, Prisma's and Node's codes), as wrapped by Prisma and pg. */
export function codesOf(err: unknown, seen = new Set<unknown>()): string[] {
  if (typeof err !== 'object' || err === null || seen.has(err)) return [];
  seen.add(err);
  const e = err as Record<string, unknown>;
  const out: string[] = [];
  for (const key of ['code', 'originalCode', 'sqlState', 'kind']) {
    const v = e[key];
    if (typeof v === 'string') out.push(v);
  }
  for (const key of ['cause', 'meta', 'driverAdapterError', 'originalError']) out.push(...codesOf(e[key], seen));
  return out;
}

/**
 * Is this error worth trying again as it is? Walks the cause chain (Prisma wraps the driver's error,
 * which wraps PostgreSQL's SQLSTATE) looking for a serialization failure, a deadlock or a lost connection.
 */
export function isTransientStoreError(err: unknown): boolean {
  if (typeof err === 'object' && err !== null && (err as { retryable?: unknown }).retryable === true) return true;
  for (const code of codesOf(err)) {
    if (transientSqlStates.has(code) || code.startsWith('08')) return true;
    if (transientNodeCodes.has(code) || transientPrismaCodes.has(code)) return true;
    if (code === 'TransactionWriteConflict' || code === 'ConnectionClosed') return true;
  }
  const message = err instanceof Error ? err.message : '';
  return transientText.test(message);
}

/**
 * Did PostgreSQL roll the whole transaction back to break a lock cycle (40P01) or a serialization
 * conflict (40001)? Then nothing of it was written and it can run again as it was; unlike a lost
 * connection, after which it may have committed.
 */
export function isRolledBackConflict(err: unknown): boolean {
  for (const code of codesOf(err)) if (code === '40P01' || code === '40001' || code === 'P2034') return true;
  return /could not serialize access|deadlock detected/i.test(err instanceof Error ? err.message : '');
}

/** The wait before attempt `attempt + 1` (attempt counts from 1): doubling from the base, capped. */
export function storeRetryDelay(policy: StoreRetryPolicy, attempt: number): number {
  return Math.min(policy.maxDelayMs, policy.baseDelayMs * 2 ** (attempt - 1));
}

/**
 * Runs `work`, retrying it per `policy` on the errors `retryable` accepts (transient database errors
 * unless told otherwise). Other errors pass through at once.
 */
export async function withStoreRetry<T>(
  policy: StoreRetryPolicy,
  work: (attempt: number) => Promise<T>,
  wait: (ms: number) => Promise<unknown> = (ms) => sleep(ms),
  retryable: (err: unknown) => boolean = isTransientStoreError,
): Promise<T> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await work(attempt);
    } catch (err) {
      if (attempt >= policy.maxAttempts || !retryable(err)) throw err;
      await wait(storeRetryDelay(policy, attempt));
    }
  }
}

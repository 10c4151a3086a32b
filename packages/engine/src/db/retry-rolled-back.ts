import { isRolledBackConflict, withStoreRetry, type StoreRetryPolicy } from '../process/store-retry.ts';

/** Attempts of an operator's transaction, the first included, and the short waits between them. */
const rolledBackRetry: StoreRetryPolicy = { maxAttempts: 5, baseDelayMs: 2, maxDelayMs: 20 };

/**
 * Runs `transaction` (one whole database transaction, nothing written outside it) again when
 * PostgreSQL rolled it back to break a lock cycle or a serialization conflict: nothing of it stayed,
 * so running it again is safe, and the caller sees the command's own outcome instead of an engine's
 * lock order. A terminate, cancel, signal, kick, reclaim or repair can close a cycle with a statement
 * round of the hot path, which holds its earlier statements' run locks until its commit (ADR 0066,
 * ADR 0074). A lost connection is not retried (the transaction may have committed); other errors
 * pass at once.
 */
export function retryRolledBack<T>(transaction: (attempt: number) => Promise<T>): Promise<T> {
  return withStoreRetry(rolledBackRetry, transaction, undefined, isRolledBackConflict);
}

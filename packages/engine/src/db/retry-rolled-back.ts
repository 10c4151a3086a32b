import { setTimeout as sleep } from 'node:timers/promises';
import { isRolledBackConflict } from '../process/store-retry.ts';

/** Attempts of an operator's transaction, the first included, before its deadlock reaches the caller. */
const attempts = 5;

/**
 * Runs `transaction` (one whole database transaction, nothing written outside it) again when
 * PostgreSQL rolled it back to break a lock cycle or a serialization conflict: nothing of it stayed,
 * so running it again is safe, and the caller sees the command's own outcome instead of an engine's
 * lock order. A terminate, cancel, signal, kick, reclaim or repair can close a cycle with a statement
 * round of the hot path, which holds its earlier statements' run locks until its commit (ADR 0066,
 * ADR 0074). A short random wait lets the other side finish first. Other errors pass at once.
 */
export async function retryRolledBack<T>(transaction: (attempt: number) => Promise<T>): Promise<T> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await transaction(attempt);
    } catch (err) {
      if (attempt >= attempts || !isRolledBackConflict(err)) throw err;
      await sleep(1 + Math.floor(Math.random() * 10 * attempt));
    }
  }
}

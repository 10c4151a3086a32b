/**
 * The one error class of the engine. `code` says what happened, `retryable` whether trying the same
 * thing again may succeed. Unknown throws are normalised with {@link toEngineError}, keeping `cause`.
 */
export type EngineErrorCode =
  | 'config_invalid'
  /** An optional peer dependency a feature needs is not installed: `details.install` names the packages. */
  | 'dependency_missing'
  | 'database_unreachable'
  | 'data_dir_unusable'
  | 'data_dir_locked'
  | 'migration_failed'
  | 'database_ahead'
  | 'migration_modified'
  | 'migration_incomplete'
  /** A migration could not take its locks within its retries' bound: nothing of it was applied (ADR 0123). */
  | 'migration_lock_timeout'
  | 'unknown_flow'
  | 'unknown_action'
  | 'invalid_input'
  | 'duplicate_business_key'
  | 'run_not_found'
  | 'run_not_open'
  | 'outbox_unroutable'
  | 'outbox_publish_failed'
  | 'invalid_definition'
  | 'unknown_process'
  | 'instance_not_found'
  | 'instance_not_quarantined'
  /** No outbox row with that id. */
  | 'outbox_not_found'
  | 'state_undecodable'
  | 'state_invalid'
  | 'version_conflict'
  | 'release_failed'
  /** A repair's expected state no longer holds: nothing changed; `details.current` is the state now. */
  | 'repair_conflict'
  /** A repair that cannot apply to its target as it is (see its preview's blockers): nothing changed. */
  | 'repair_refused'
  /** No approval with that id. */
  | 'approval_not_found'
  /** The drafter of a gated command tried to approve or reject it: a second operator must. */
  | 'approval_by_drafter'
  /** The approval was already decided (approved, rejected, expired): nothing changed. */
  | 'approval_decided'
  /** The approval waited past its expiry: it can no longer be approved; draft the command again. */
  | 'approval_expired'
  /**
   * The engine stopped while applying an approved bulk (ADR 0121): the items in `details` are
   * applied, the rest are left for a bulk resumer, which finishes them; nothing to do again.
   */
  | 'approval_interrupted'
  /**
   * A command's transaction gave up within its limit: another session held a row it needed (an open
   * transaction on the target), or a statement ran past the limit. Nothing changed; send it again later.
   */
  | 'target_busy'
  | 'internal';

const retryableCodes: ReadonlySet<EngineErrorCode> = new Set([
  'database_unreachable',
  'outbox_publish_failed',
  'version_conflict',
  'migration_lock_timeout',
]);

export class EngineError extends Error {
  override readonly name = 'EngineError';
  readonly code: EngineErrorCode;
  readonly retryable: boolean;
  /** For `invalid_input`: the field, and the path inside it, that was refused (`input.items[3].name`). */
  readonly field: string | null;
  /** Structured context a caller can act on (for `repair_conflict`: `{ current, expected }`). */
  readonly details: Readonly<Record<string, unknown>> | null;

  constructor(
    code: EngineErrorCode,
    message: string,
    options?: { cause?: unknown; retryable?: boolean; field?: string; details?: Record<string, unknown> },
  ) {
    super(message, options?.cause === undefined ? undefined : { cause: options.cause });
    this.code = code;
    this.retryable = options?.retryable ?? retryableCodes.has(code);
    this.field = options?.field ?? null;
    this.details = options?.details ?? null;
  }
}

export function toEngineError(err: unknown, code: EngineErrorCode = 'internal'): EngineError {
  if (err instanceof EngineError) return err;
  return new EngineError(code, thrownText(err), { cause: err });
}

/**
 * An error's message, or `String()` of any other thrown value; never throws. A value `String()`
 * cannot convert (a null-prototype object, a throwing `toString` or `message` getter) is described
 * instead, so the catch that reports a failure cannot itself fail (reviews 35 and 39).
 */
export function thrownText(err: unknown): string {
  try {
    if (err instanceof Error) {
      const message: unknown = err.message;
      return typeof message === 'string' ? message : String(message);
    }
    return String(err);
  } catch {
    return '[a thrown value without a usable toString]';
  }
}

/**
 * What an operator's command throws when the database failed it (review 49): an EngineError as it is;
 * anything else as `internal`, its message reduced to the driver's own words. Prisma's message begins
 * "Invalid `db.flowRun.findUnique()` invocation in <source path>:<line>", then quotes the engine's source
 * around it, then says what happened: only that last line is kept, and any source path left in it is
 * replaced, so neither the engine's files nor its code reach a caller. The original is the `cause`.
 */
export function commandFailure(err: unknown): EngineError {
  if (err instanceof EngineError) return err;
  return new EngineError('internal', `the command failed in the database: ${databaseSaid(err)}`, { cause: err });
}

/**
 * What the database (or the driver) said in a thrown error, in one line: Prisma's "Invalid … invocation"
 * preamble and the engine's source it quotes are dropped, its last line kept ("Raw query failed. Code:
 * `40P01`. Message: `deadlock detected`"), and any source path in it replaced.
 */
export function databaseSaid(err: unknown): string {
  const lines = thrownText(err)
    .split('\n')
    .map((l) => l.trim())
    .filter((l) => l.length > 0);
  const said = (/\binvocation\b/.test(lines[0] ?? '') ? lines.at(-1) : lines[0]) ?? 'no message';
  return said.replace(/(?:[A-Za-z]:)?(?:[\\/][\w.@+-]+)+\.(?:[cm]?[jt]sx?)(?::\d+)*/g, '<source>');
}

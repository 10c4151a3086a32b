/**
 * The one error class of `@sagaflow/test-postgres`. `code` says what happened, `retryable` whether
 * trying the same thing again may succeed; the message says what to do next.
 */
export type TestPostgresErrorCode =
  | 'binaries_missing'
  | 'postgres_user_missing'
  | 'command_failed'
  | 'start_failed'
  | 'cluster_stopped'
  | 'invalid_database_name'
  | 'template_in_use'
  | 'database_exists'
  | 'database_missing';

const retryableCodes: ReadonlySet<TestPostgresErrorCode> = new Set(['start_failed', 'template_in_use']);

export class TestPostgresError extends Error {
  override readonly name = 'TestPostgresError';
  readonly code: TestPostgresErrorCode;
  readonly retryable: boolean;

  constructor(code: TestPostgresErrorCode, message: string, options?: { cause?: unknown; retryable?: boolean }) {
    super(message, options?.cause === undefined ? undefined : { cause: options.cause });
    this.code = code;
    this.retryable = options?.retryable ?? retryableCodes.has(code);
  }
}

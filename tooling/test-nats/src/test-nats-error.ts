/**
 * The one error class of `@sagaflow/test-nats`. `code` says what happened, `retryable` whether
 * trying the same thing again may succeed; the message says what to do next.
 */
export type TestNatsErrorCode = 'binary_missing' | 'user_missing' | 'start_failed';

export class TestNatsError extends Error {
  override readonly name = 'TestNatsError';
  readonly code: TestNatsErrorCode;
  readonly retryable: boolean;

  constructor(code: TestNatsErrorCode, message: string, options?: { cause?: unknown }) {
    super(message, options?.cause === undefined ? undefined : { cause: options.cause });
    this.code = code;
    this.retryable = code === 'start_failed';
  }
}

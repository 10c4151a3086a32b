export type ServiceErrorCode = 'invalid_json' | 'invalid_body' | 'body_too_large' | 'not_found' | 'method_not_allowed';

/**
 * The service's one error class: what went wrong with a request, and (for bad input) which field.
 * Engine failures arrive as the engine's own `EngineError`; http-status.ts maps both to a status.
 */
export class ServiceError extends Error {
  override readonly name = 'ServiceError';
  constructor(
    readonly code: ServiceErrorCode,
    message: string,
    /** The request field at fault, for bad input; null otherwise. */
    readonly field: string | null = null,
  ) {
    super(message);
  }
}

import { EngineError, isNoConnectionInTime, type EngineErrorCode } from '@sagaflow/engine';
import { ServiceError, type ServiceErrorCode } from './service-error.ts';

/** The one table from error codes (the service's and the engine's) to HTTP statuses. */
const statusFor: Record<ServiceErrorCode | EngineErrorCode, number> = {
  invalid_json: 400,
  invalid_body: 400,
  body_too_large: 413,
  not_found: 404,
  method_not_allowed: 405,
  config_invalid: 500,
  dependency_missing: 500,
  database_unreachable: 503,
  data_dir_unusable: 500,
  data_dir_locked: 500,
  migration_failed: 500,
  database_ahead: 500,
  migration_modified: 500,
  migration_incomplete: 500,
  migration_lock_timeout: 503,
  unknown_flow: 500,
  unknown_action: 500,
  invalid_input: 400,
  duplicate_business_key: 409,
  run_not_found: 404,
  run_not_open: 409,
  outbox_unroutable: 500,
  outbox_publish_failed: 502,
  invalid_definition: 500,
  unknown_process: 400,
  instance_not_found: 404,
  outbox_not_found: 404,
  instance_not_quarantined: 409,
  state_undecodable: 500,
  state_invalid: 422,
  version_conflict: 409,
  release_failed: 409,
  repair_conflict: 409,
  repair_refused: 409,
  approval_not_found: 404,
  approval_by_drafter: 403,
  approval_decided: 409,
  approval_expired: 409,
  approval_interrupted: 503,
  target_busy: 409,
  internal: 500,
};

export interface ErrorResponse {
  status: number;
  body: { error: { code: string; message: string; field: string | null } };
  headers?: Record<string, string>;
}

/** What a failed request answers. Anything unexpected is a 500 whose message leaks no internals. */
export function toErrorResponse(err: unknown): ErrorResponse {
  if (err instanceof ServiceError || err instanceof EngineError) {
    const status = statusFor[err.code];
    const field = err instanceof ServiceError ? err.field : null;
    // Server-side faults are logged by the caller; the client gets the code, not the details.
    const message = status >= 500 ? 'the service could not handle the request' : err.message;
    return { status, body: { error: { code: err.code, message, field } } };
  }
  // No pooled connection came in time: nothing was sent, so the client may simply try again.
  if (isNoConnectionInTime(err))
    return {
      status: 503,
      headers: { 'retry-after': '1' },
      body: {
        error: { code: 'database_busy', message: 'the database is busy; try again in a moment', field: null },
      },
    };
  return {
    status: 500,
    body: { error: { code: 'internal', message: 'the service could not handle the request', field: null } },
  };
}

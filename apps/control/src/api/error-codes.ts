import type { TRPC_ERROR_CODE_KEY } from '@trpc/server';
import type { EngineErrorCode } from '@sagaflow/engine';

/** The one table from engine error codes to API (tRPC, and through it HTTP) codes. */
export const apiCodeFor: Record<EngineErrorCode, TRPC_ERROR_CODE_KEY> = {
  config_invalid: 'INTERNAL_SERVER_ERROR',
  database_unreachable: 'SERVICE_UNAVAILABLE',
  data_dir_unusable: 'INTERNAL_SERVER_ERROR',
  data_dir_locked: 'INTERNAL_SERVER_ERROR',
  migration_failed: 'INTERNAL_SERVER_ERROR',
  database_ahead: 'INTERNAL_SERVER_ERROR',
  migration_modified: 'INTERNAL_SERVER_ERROR',
  migration_incomplete: 'INTERNAL_SERVER_ERROR',
  unknown_flow: 'BAD_REQUEST',
  unknown_action: 'BAD_REQUEST',
  invalid_input: 'BAD_REQUEST',
  duplicate_business_key: 'CONFLICT',
  run_not_found: 'NOT_FOUND',
  run_not_open: 'CONFLICT',
  outbox_unroutable: 'INTERNAL_SERVER_ERROR',
  outbox_publish_failed: 'BAD_GATEWAY',
  invalid_definition: 'INTERNAL_SERVER_ERROR',
  unknown_process: 'BAD_REQUEST',
  instance_not_found: 'NOT_FOUND',
  instance_not_quarantined: 'CONFLICT',
  state_undecodable: 'INTERNAL_SERVER_ERROR',
  state_invalid: 'UNPROCESSABLE_CONTENT',
  version_conflict: 'CONFLICT',
  release_failed: 'CONFLICT',
  repair_conflict: 'CONFLICT',
  repair_refused: 'CONFLICT',
  internal: 'INTERNAL_SERVER_ERROR',
};

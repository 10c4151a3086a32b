/**
 * The channel a NOTIFY goes out on when a job due now is queued (migration 0021's trigger) or given
 * back; the payload is the job's kind. Worker pools LISTEN on it (ADR 0038).
 */
export const jobChannel = 'sagaflow_jobs';

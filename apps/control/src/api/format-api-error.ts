import type { TRPCDefaultErrorShape, TRPCError } from '@trpc/server';
import { EngineError } from '@sagaflow/engine';
import { ZodError } from 'zod';
import { errorIdFor } from './error-ids.ts';
import { isDatabaseBusyMessage } from './database-busy.ts';
import { repairErrorBody, type RepairErrorBody } from './repairs/repair-error-body.ts';

/** The messages of tRPC's own limits, reworded to name the setting that bounds them. */
function limitMessage(error: TRPCError): string | null {
  if (error.code === 'PAYLOAD_TOO_LARGE')
    return 'the request body is larger than the API accepts (SAGAFLOW_API_MAX_BODY_BYTES)';
  if (error.code === 'BAD_REQUEST' && /^Batch call exceeds maximum size/.test(error.message))
    return 'the batch holds more calls than the API accepts in one request (SAGAFLOW_API_MAX_BATCH_SIZE); split it';
  return null;
}

/**
 * The one formatter every API error passes through. Bad input gets a message that names the field
 * ("input.flowName: expected string", or the engine's "input.items[3].name: lone UTF-16 surrogate")
 * and `data.field`. A server-side error (5xx) never shows its message: it may carry SQL, file paths,
 * a driver's source excerpt or a stack. It says "internal error" and the request id instead, under
 * which the HTTP server's onError logged the detail. A refused repair (409) carries `data.repair`:
 * the state now, the state expected, the blockers and its audit row's id (ADR 0019), and names in
 * `data.field` the part of the command it refused (`input.expected.stepAttempts`, ADR 0031). A 4xx from the
 * engine carries its error code in `data.engineCode`.
 */
export function formatApiError(opts: {
  shape: TRPCDefaultErrorShape;
  error: TRPCError;
}): TRPCDefaultErrorShape & { data: { field: string | null; repair?: RepairErrorBody; engineCode?: string } } {
  const { shape, error } = opts;
  const { stack: _stack, ...trpcData } = shape.data;
  // A 4xx the engine answered names its code (`target_busy`, `approval_decided`, …): clients tell apart
  // errors that share an HTTP status (a busy target, 409, is not a refused repair, 409).
  const data =
    shape.data.httpStatus < 500 && error.cause instanceof EngineError
      ? { ...trpcData, engineCode: error.cause.code }
      : trpcData;
  if (shape.data.httpStatus >= 500) {
    const id = errorIdFor(error);
    if (error.code === 'SERVICE_UNAVAILABLE' && isDatabaseBusyMessage(error.message))
      return { ...shape, message: `${error.message} (request id ${id})`, data: { ...data, field: null } };
    return {
      ...shape,
      message: `internal error, see the control plane log (request id ${id})`,
      data: { ...data, field: null },
    };
  }
  if (error.cause instanceof ZodError) {
    const issue = error.cause.issues[0];
    const field = issue ? ['input', ...issue.path.map(String)].join('.') : 'input';
    return { ...shape, message: `${field}: ${issue?.message ?? 'invalid'}`, data: { ...data, field } };
  }
  const repair = repairErrorBody(error.cause);
  if (repair) {
    // A refused repair names the command field it is about (`expected.stepAttempts`) beside its body.
    const engineField = error.cause instanceof EngineError ? error.cause.field : null;
    return { ...shape, data: { ...data, field: engineField === null ? null : `input.${engineField}`, repair } };
  }
  if (error.cause instanceof EngineError && error.cause.field !== null) {
    const { field: engineField, message } = error.cause;
    const field = `input.${engineField}`;
    // The engine names the field as its caller passed it; the API's callers know it under `input`.
    return {
      ...shape,
      message: message.startsWith(engineField) ? `input.${message}` : message,
      data: { ...data, field },
    };
  }
  const limit = limitMessage(error);
  return { ...shape, ...(limit ? { message: limit } : {}), data: { ...data, field: null } };
}

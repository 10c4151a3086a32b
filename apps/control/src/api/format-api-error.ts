import type { TRPCDefaultErrorShape, TRPCError } from '@trpc/server';
import { ZodError } from 'zod';

/**
 * Bad input gets a message that names the field ("input.flowName: expected string"), not a JSON
 * dump of validator issues; the API's callers (and the console) show it as it is.
 */
export function formatApiError(opts: {
  shape: TRPCDefaultErrorShape;
  error: TRPCError;
}): TRPCDefaultErrorShape & { data: { field: string | null } } {
  const { shape, error } = opts;
  if (error.cause instanceof ZodError) {
    const issue = error.cause.issues[0];
    const field = issue ? ['input', ...issue.path.map(String)].join('.') : 'input';
    return { ...shape, message: `${field}: ${issue?.message ?? 'invalid'}`, data: { ...shape.data, field } };
  }
  return { ...shape, data: { ...shape.data, field: null } };
}

import { TRPCClientError } from '@trpc/client';

export interface ApiErrorInfo {
  /** tRPC error code key, e.g. NOT_FOUND, BAD_REQUEST, BAD_GATEWAY; null when the call never got an answer. */
  code: string | null;
  httpStatus: number | null;
  message: string;
}

/** What the console needs to know about a failed call, whatever threw it. */
export function apiErrorInfo(error: unknown): ApiErrorInfo {
  if (error instanceof TRPCClientError) {
    const data: unknown = error.data;
    const fields = typeof data === 'object' && data !== null ? (data as Record<string, unknown>) : {};
    return {
      code: typeof fields.code === 'string' ? fields.code : null,
      httpStatus: typeof fields.httpStatus === 'number' ? fields.httpStatus : null,
      message: error.message,
    };
  }
  return { code: null, httpStatus: null, message: error instanceof Error ? error.message : String(error) };
}

/** Client errors (bad id, not found) will not change on retry; outages might. */
export function shouldRetry(failureCount: number, error: unknown): boolean {
  const { httpStatus } = apiErrorInfo(error);
  if (httpStatus !== null && httpStatus < 500) return false;
  return failureCount < 2;
}

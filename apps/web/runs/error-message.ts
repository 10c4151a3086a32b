/** The human part of a recorded error (`{ message }` objects, strings), or null to show the JSON. */
export function errorMessage(error: unknown): string | null {
  if (typeof error === 'string') return error;
  if (typeof error === 'object' && error !== null && 'message' in error && typeof error.message === 'string') {
    return error.message;
  }
  return null;
}

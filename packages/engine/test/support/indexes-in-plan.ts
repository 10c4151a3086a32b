/** Every index a plan reads, from EXPLAIN's JSON (an `Index Name` at any depth). */
export function indexesIn(plan: unknown): string[] {
  if (Array.isArray(plan)) return plan.flatMap(indexesIn);
  if (plan === null || typeof plan !== 'object') return [];
  return Object.entries(plan).flatMap(([k, v]) => (k === 'Index Name' && typeof v === 'string' ? [v] : indexesIn(v)));
}

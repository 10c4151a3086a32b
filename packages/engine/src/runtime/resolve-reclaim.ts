/** A step's own reclaim settings, as its builder recorded them. */
export interface ReclaimOverride {
  /** reclaimStaleAfter(n): wins outright and implies enabled. */
  afterSeconds?: number;
  /** enableStaleReclaim(true|false). */
  enabled?: boolean;
}

/**
 * Seed 000's four-rule precedence, resolved once at schedule time and persisted on the row:
 * 1. an explicit threshold wins and implies enabled;
 * 2. else enable(true) uses config's after_seconds whatever config's enabled says;
 * 3. else enable(false) forces it off whatever config says;
 * 4. else the row inherits config.
 * Returns the row's reclaim_stale_after_seconds (null = never reclaimed).
 */
export function resolveReclaimSeconds(
  override: ReclaimOverride,
  config: { enabled: boolean; after_seconds: number },
): number | null {
  if (override.afterSeconds !== undefined) return override.afterSeconds;
  if (override.enabled === true) return config.after_seconds;
  if (override.enabled === false) return null;
  return config.enabled ? config.after_seconds : null;
}

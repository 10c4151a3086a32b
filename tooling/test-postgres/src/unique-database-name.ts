import { randomBytes } from 'node:crypto';

const maxLength = 63;

/**
 * A database name that no other test run will pick: `prefix` lowercased with anything outside
 * `[a-z0-9_]` replaced by `_`, then `_` + time + random hex. At most 63 characters (the prefix is
 * cut to fit), so PostgreSQL never truncates it.
 *
 * @example
 * uniqueDatabaseName('Claim-Action') // 'claim_action_m5x2k9qa3f9c1b7e'
 */
export function uniqueDatabaseName(prefix: string): string {
  const suffix = `_${Date.now().toString(36)}${randomBytes(4).toString('hex')}`;
  let base = prefix.toLowerCase().replace(/[^a-z0-9_]/g, '_');
  if (!/^[a-z_]/.test(base)) base = `db_${base}`;
  return `${base.slice(0, maxLength - suffix.length)}${suffix}`;
}

/** A token as lists show it: never its secret. */
export interface ApiTokenView {
  id: string;
  name: string;
  operator: string;
  /** The token's first characters, e.g. `sgf_AbCd1234`. */
  hint: string;
  createdAt: string;
  createdBy: string;
  lastUsedAt: string | null;
  expiresAt: string | null;
  revokedAt: string | null;
  revokedBy: string | null;
  state: 'active' | 'expired' | 'revoked';
}

export interface DbApiTokenWithOperator {
  id: string;
  name: string;
  hint: string;
  created_at: Date;
  created_by: string;
  last_used_at: Date | null;
  expires_at: Date | null;
  revoked_at: Date | null;
  revoked_by: string | null;
  operator: { name: string };
}

const iso = (d: Date | null) => (d ? d.toISOString() : null);

export function toApiTokenView(row: DbApiTokenWithOperator, now: Date): ApiTokenView {
  return {
    id: row.id,
    name: row.name,
    operator: row.operator.name,
    hint: row.hint,
    createdAt: row.created_at.toISOString(),
    createdBy: row.created_by,
    lastUsedAt: iso(row.last_used_at),
    expiresAt: iso(row.expires_at),
    revokedAt: iso(row.revoked_at),
    revokedBy: row.revoked_by,
    state: row.revoked_at ? 'revoked' : row.expires_at && row.expires_at <= now ? 'expired' : 'active',
  };
}

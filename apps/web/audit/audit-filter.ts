import { paramText, parseSince, sinceFrom, type Since } from '@/ui/since-choices';

export const auditSources = [
  { value: '', label: 'Everything' },
  { value: 'repair', label: 'Repairs' },
  { value: 'auth', label: 'Sign-ins, operators and runs started' },
] as const;

/** What the audit trail shows; kept in the URL (`source`, `actor`, `command`, `target`, `outcome`, `since`). */
export interface AuditFilter {
  source: '' | 'repair' | 'auth';
  actor: string;
  command: string;
  target: string;
  outcome: string;
  since: Since;
}

export function parseAuditFilter(params: Record<string, string | string[] | undefined>): AuditFilter {
  const source = paramText(params.source);
  return {
    source: source === 'repair' || source === 'auth' ? source : '',
    actor: paramText(params.actor),
    command: paramText(params.command),
    target: paramText(params.target),
    outcome: paramText(params.outcome),
    since: parseSince(paramText(params.since)),
  };
}

export function auditHref(f: AuditFilter): string {
  const p = new URLSearchParams();
  for (const key of ['source', 'actor', 'command', 'target', 'outcome', 'since'] as const)
    if (f[key]) p.set(key, f[key]);
  const q = p.toString();
  return q ? `/audit?${q}` : '/audit';
}

/** The audit.page input for a filter, with the time range ending at `now`. */
export function auditInputFor(f: AuditFilter, now: number) {
  const from = sinceFrom(f.since, now);
  return {
    ...(f.source ? { source: f.source } : {}),
    ...(f.actor ? { actor: f.actor } : {}),
    ...(f.command ? { command: f.command } : {}),
    ...(f.target ? { target: f.target } : {}),
    ...(f.outcome ? { outcome: f.outcome } : {}),
    ...(from ? { from } : {}),
    limit: 50,
  };
}

/** The tone of an outcome word: applied / succeeded are fine, refusals and conflicts are not. */
export function outcomeTone(outcome: string): 'ok' | 'bad' | 'warn' | 'muted' {
  if (outcome === 'applied' || outcome === 'succeeded') return 'ok';
  if (outcome === 'conflict' || outcome === 'rate_limited') return 'warn';
  if (outcome === 'refused') return 'bad';
  return 'muted';
}

import { paramText, parseSince, sinceFrom, type Since } from '@/ui/since-choices';

/** Seed 000's anomaly codes, ADR 0125's, 0127's, 0132's and 0137's (duplicated: the console imports no engine code). */
export const anomalyCodes = [
  'claim_lost',
  'outcome_rejected',
  'batch_finished_early',
  'claim_not_committed',
  'expiry_failed',
  'write_refused',
  'rejection_undelivered',
  'transition_lost',
  'retry_policy_threw',
  'replan_failed',
  'replan_incomplete',
  'run_step_limit_near',
  'process_timeout_failing',
  'process_delivery_held_up',
  'run_held',
] as const;

/** What the anomaly log shows; kept in the URL (`code`, `run`, `since`). */
export interface AnomaliesFilter {
  code: string;
  run: string;
  since: Since;
}

const uuid = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

export function parseAnomaliesFilter(params: Record<string, string | string[] | undefined>): AnomaliesFilter {
  const code = paramText(params.code);
  return {
    code: (anomalyCodes as readonly string[]).includes(code) ? code : '',
    run: paramText(params.run, 100),
    since: parseSince(paramText(params.since)),
  };
}

export function anomaliesHref(f: AnomaliesFilter): string {
  const p = new URLSearchParams();
  if (f.code) p.set('code', f.code);
  if (f.run) p.set('run', f.run);
  if (f.since) p.set('since', f.since);
  const q = p.toString();
  return q ? `/anomalies?${q}` : '/anomalies';
}

/** Whether the run filter is a run id the API accepts; anything else is said on the page, not sent. */
export const runFilterValid = (run: string) => run === '' || uuid.test(run);

/** The anomalies.page input for a filter, with the time range ending at `now`. */
export function anomaliesInputFor(f: AnomaliesFilter, now: number) {
  const from = sinceFrom(f.since, now);
  return {
    ...(f.code ? { code: f.code as (typeof anomalyCodes)[number] } : {}),
    ...(f.run && runFilterValid(f.run) ? { runId: f.run.toLowerCase() } : {}),
    ...(from ? { from } : {}),
    limit: 50,
  };
}

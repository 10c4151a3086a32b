import { scaleFlows, scaleProcess } from './seed-console-scale.ts';

/** One call the console makes: a tRPC query procedure and its input, named for the report. */
export interface ConsoleQuery {
  name: string;
  /** `router.procedure`, as the console calls it over HTTP. */
  path: string;
  input: unknown;
}

/** Ids and positions a catalogue needs from the seeded data (a deep cursor's row, a run to open). */
export interface ConsoleSamples {
  /** A finished run with five steps, four events and an anomaly. */
  runId: string;
  /** An instance with five transitions. */
  instanceId: string;
  /** A row half-way down the newest-first list: its created_at and id. */
  middle: { at: Date; id: string };
  /** A business key that exists. */
  businessKey: string;
}

/** The console's keyset cursor (apps/control's page-cursor: base64url JSON); a deep page starts from it. */
const newestCursor = (row: { at: Date; id: string }) =>
  Buffer.from(JSON.stringify({ o: 'newest', t: row.at.toISOString(), id: row.id })).toString('base64url');

/**
 * Every read the console makes on its pages, with the filters an on-call operator reaches for: the
 * runs list (first page both orders, a status, a flow, stuck-only and a stuck kind, a search, a deep
 * cursor page), a run page, the instances list and an instance page, the overview and its charts,
 * the anomaly log and the audit trail, and the CLI's unpaged lists. The plan test and the scale
 * bench walk the same list.
 */
export function consoleQueries(s: ConsoleSamples): ConsoleQuery[] {
  const q = (name: string, path: string, input: unknown = {}): ConsoleQuery => ({ name, path, input });
  const open = ['Pending', 'Running', 'Waiting', 'Compensating'];
  return [
    q('runs: first page, newest', 'runs.page', { limit: 50 }),
    q('runs: first page, stalest', 'runs.page', { limit: 50, order: 'stalest' }),
    q('runs: status Completed', 'runs.page', { limit: 50, status: ['Completed'] }),
    q('runs: status Failed, stalest', 'runs.page', { limit: 50, status: ['Failed'], order: 'stalest' }),
    q('runs: open statuses', 'runs.page', { limit: 50, status: open }),
    q('runs: one flow', 'runs.page', { limit: 50, flowName: scaleFlows[1] }),
    // The stuck view as the console asks for it (runs-filter.ts: stuck narrows to the open statuses).
    q('runs: stuck view, stalest', 'runs.page', { limit: 50, status: open, stuckOnly: true, order: 'stalest' }),
    q('runs: stuck view, newest', 'runs.page', { limit: 50, status: open, stuckOnly: true }),
    q('runs: stuck kind owner_gone', 'runs.page', {
      limit: 50,
      status: open,
      stuckOnly: true,
      stuckReason: 'owner_gone',
    }),
    q('runs: stuck only, any status', 'runs.page', { limit: 50, stuckOnly: true }),
    q('runs: search by business key', 'runs.page', { limit: 50, search: s.businessKey }),
    q('runs: search by id', 'runs.page', { limit: 50, search: s.runId }),
    q('runs: deep cursor page', 'runs.page', { limit: 50, cursor: newestCursor(s.middle) }),
    q('run detail', 'runs.get', { id: s.runId }),
    q('instances: first page, stalest', 'instances.page', { limit: 50 }),
    q('instances: newest', 'instances.page', { limit: 50, order: 'newest' }),
    q('instances: quarantined', 'instances.page', { limit: 50, status: ['QUARANTINED'] }),
    q('instances: state ManualReview', 'instances.page', {
      limit: 50,
      state: 'ManualReview',
      processName: scaleProcess,
    }),
    q('instance detail', 'instances.get', { id: s.instanceId }),
    q('overview counts', 'overview.get'),
    q('overview charts (24 h)', 'series.get', { window: '24h' }),
    q('definitions with live counts', 'definitions.list'),
    q('anomalies: first page', 'anomalies.page', { limit: 50 }),
    q('anomalies: one code', 'anomalies.page', { limit: 50, code: 'write_refused' }),
    q('audit: first page', 'audit.page', { limit: 50 }),
    q('audit: one actor', 'audit.page', { limit: 50, actor: 'alice' }),
    // The older unpaged lists the CLI still calls (ADR 0018 kept them).
    q('CLI runs.list, stalest', 'runs.list', { order: 'stalest', status: ['Failed'] }),
    q('CLI instances.list, quarantined', 'instances.list', { status: 'QUARANTINED' }),
  ];
}

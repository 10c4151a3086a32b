import { describe, expect, it } from 'vitest';
import { openRunStatuses, terminalRunStatuses } from './run-statuses';
import { pageInputFor, parseRunsFilter, runsHref, statusesFor, wantsStuck } from './runs-filter';

describe('runs filter', () => {
  it('round-trips through the URL', () => {
    const filter = parseRunsFilter({
      status: 'Waiting',
      stuck: '1',
      order: 'stalest',
      flow: 'demo.order',
      q: 'k 1',
      stalled: '15',
    });
    expect(filter).toEqual({
      reason: '',
      status: 'Waiting',
      stuckOnly: true,
      order: 'stalest',
      flow: 'demo.order',
      q: 'k 1',
      stalledMinutes: 15,
    });
    expect(runsHref(filter)).toBe('/runs?status=Waiting&stuck=1&order=stalest&flow=demo.order&q=k+1&stalled=15');
    expect(parseRunsFilter({ stalled: '7' }).stalledMinutes).toBeNull();
    expect(parseRunsFilter(Object.fromEntries(new URLSearchParams(runsHref(filter).split('?')[1])))).toEqual(filter);
  });

  it('a stuck reason (the overview links each reason) keeps stuck runs of that kind and goes to the API', () => {
    const filter = parseRunsFilter({ status: 'stuck', reason: 'owner_gone', order: 'stalest' });
    expect(runsHref(filter)).toBe('/runs?status=stuck&order=stalest&reason=owner_gone');
    expect(wantsStuck(parseRunsFilter({ reason: 'replay_blocked' }))).toBe(true);
    expect(pageInputFor(filter)).toMatchObject({ stuckOnly: true, stuckReason: 'owner_gone', order: 'stalest' });
    expect(pageInputFor(parseRunsFilter({}))).not.toHaveProperty('stuckReason');
  });

  it('falls back to all statuses for an unknown one', () => {
    expect(parseRunsFilter({ status: 'Bogus' }).status).toBe('all');
  });

  it('the new statuses are choices, and "open" and "finished" cover them all', () => {
    expect(parseRunsFilter({ status: 'TimedOut' }).status).toBe('TimedOut');
    expect(statusesFor(parseRunsFilter({ status: 'open' }))).toEqual([...openRunStatuses]);
    expect(statusesFor(parseRunsFilter({ status: 'finished' }))).toEqual([...terminalRunStatuses]);
  });

  it('asking for stuck runs queries open statuses only, since a finished run is never stuck', () => {
    expect(wantsStuck(parseRunsFilter({ status: 'stuck' }))).toBe(true);
    expect(statusesFor(parseRunsFilter({ status: 'stuck' }))).toEqual([...openRunStatuses]);
    expect(statusesFor(parseRunsFilter({ stuck: '1' }))).toEqual([...openRunStatuses]);
    expect(statusesFor(parseRunsFilter({ status: 'Waiting', stuck: '1' }))).toEqual(['Waiting']);
    // Nothing open left to ask for: keep the user's choice (the list will be empty, honestly).
    expect(statusesFor(parseRunsFilter({ status: 'Completed', stuck: '1' }))).toEqual(['Completed']);
  });

  it('stuck only, a flow and a search go to the API, which filters them', () => {
    expect(pageInputFor(parseRunsFilter({ stuck: '1', flow: 'demo.order', q: 'order-7' }))).toEqual({
      status: [...openRunStatuses],
      stuckOnly: true,
      flowName: 'demo.order',
      search: 'order-7',
      order: 'newest',
      limit: 50,
    });
    expect(pageInputFor(parseRunsFilter({}))).toEqual({ order: 'newest', limit: 50 });
    expect(pageInputFor(parseRunsFilter({ stalled: '60' }))).toEqual({
      staleForSeconds: 3600,
      order: 'newest',
      limit: 50,
    });
  });
});

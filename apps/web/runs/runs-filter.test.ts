import { describe, expect, it } from 'vitest';
import { openRunStatuses, terminalRunStatuses } from './run-statuses';
import { parseRunsFilter, runsHref, statusesFor, wantsStuck } from './runs-filter';

describe('runs filter', () => {
  it('round-trips through the URL', () => {
    const filter = parseRunsFilter({ status: 'Waiting', stuck: '1', order: 'stalest' });
    expect(filter).toEqual({ status: 'Waiting', stuckOnly: true, order: 'stalest' });
    expect(runsHref(filter)).toBe('/runs?status=Waiting&stuck=1&order=stalest');
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
});

import { describe, expect, it } from 'vitest';
import { waitingForLead, waitingForParts } from './waiting-for-parts';

describe('waitingForParts', () => {
  it('splits a signal wait into words and the instant it gives up at', () => {
    expect(waitingForParts('signal "confirm" until 2026-01-02T10:42:13.000Z')).toEqual([
      { kind: 'text', text: 'signal "confirm" until ' },
      { kind: 'time', iso: '2026-01-02T10:42:13.000Z' },
    ]);
  });

  it('reads a signal without a timeout as "(no timeout)", not "until ever"', () => {
    expect(waitingForParts('signal "confirm" until ever')).toEqual([
      { kind: 'text', text: 'signal "confirm" (no timeout)' },
    ]);
  });

  it('turns the id of a child run into a run part and keeps the flow name as text', () => {
    const id = '6f1c2d3e-4a5b-4c6d-8e7f-0123456789ab';
    expect(waitingForParts(`child run ${id} (demo.child)`)).toEqual([
      { kind: 'text', text: 'child run ' },
      { kind: 'run', id },
      { kind: 'text', text: ' (demo.child)' },
    ]);
  });

  it('leaves text it does not recognise as it is', () => {
    expect(waitingForParts('step 3 is locked by another worker')).toEqual([
      { kind: 'text', text: 'step 3 is locked by another worker' },
    ]);
  });
});

describe('waitingForLead', () => {
  it.each([
    ['signal "x" until ever', 'Waiting for'],
    ['timer until 2026-01-02T10:42:13.000Z', 'Waiting for'],
    ['retry of step 2 (demo.x) at 2026-01-02T10:42:13.000Z', 'Waiting for'],
    ['child run (starting) (demo.child)', 'Waiting for'],
    ['step 3 is locked by another worker', 'Waiting:'],
  ])('%s reads as "%s …"', (text, lead) => {
    expect(waitingForLead(text)).toBe(lead);
  });
});

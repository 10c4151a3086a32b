import { describe, expect, it } from 'vitest';
import { machineEdges } from './state-machine-graph';

describe('machineEdges', () => {
  it('folds transitions and commands per edge and counts the instance history on each', () => {
    const edges = machineEdges(
      [
        { on: 'Paid', kind: 'message', from: ['A'], to: 'B' },
        { on: 'Late', kind: 'message', from: ['B'], to: 'C' },
        { on: 'Timeout', kind: 'timeout', from: ['B'], to: 'C' },
      ],
      [{ name: 'Retry', from: ['C'], to: 'B' }],
      [
        { from: 'A', to: 'B', outcome: 'applied', messageType: 'Paid' },
        { from: 'B', to: 'C', outcome: 'applied', messageType: 'Timeout' },
        { from: 'C', to: 'B', outcome: 'repair', messageType: 'operator:Retry' },
        { from: 'B', to: 'C', outcome: 'applied', messageType: 'Late' },
        { from: 'B', to: 'B', outcome: 'ignored', messageType: 'Paid' },
        { from: 'C', to: 'A', outcome: 'repair', messageType: 'operator:force_transition' },
        // A release: by skip only its audit row; by retry the message's applied row and the audit row.
        { from: 'A', to: 'A', outcome: 'repair', messageType: 'Paid', detail: { release: 'skip' } },
        { from: 'A', to: 'B', outcome: 'applied', messageType: 'Paid', detail: { release: 'retry' } },
        { from: 'A', to: 'A', outcome: 'repair', messageType: 'Paid', detail: { release: 'retry', appliedTo: 'B' } },
      ],
    );
    expect(edges.map((e) => [e.id, e.triggers.map((t) => t.name).join('+'), e.taken])).toEqual([
      ['A->B', 'Paid', 2],
      ['B->C', 'Late+Timeout', 2],
      ['C->B', 'Retry', 1],
      ['C->A', 'operator:force_transition', 1],
    ]);
  });
});

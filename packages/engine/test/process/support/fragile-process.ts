import { z } from 'zod';
import { defineProcess } from '../../../src/index.ts';

/**
 * A small process for the failure paths the fulfilment process cannot reach: a start message that
 * can fail before its instance exists, a timeout whose handler throws, a correlation that throws.
 */
export function fragileProcess() {
  return defineProcess({
    name: 'fragile',
    states: ['Open', 'Ticked', 'Done'],
    initial: 'Open',
    final: ['Done'],
    data: z.object({ key: z.string() }),
    initialData: (key) => ({ key }),
    messages: {
      Start: z.object({ key: z.string(), explode: z.boolean().default(false) }),
      Finish: z.object({ key: z.string() }),
    },
    correlate: (m) => {
      if (m.payload.key === 'unroutable') throw new Error('no instance for this key');
      return m.payload.key;
    },
    timeouts: { Tick: { afterMs: 60_000, expects: 'Open' } },
    on: {
      Start: [
        {
          from: 'Open',
          to: 'Open',
          schedule: ['Tick'],
          then: (d, p) => {
            if (p.explode) throw new Error('start exploded');
            return { data: d };
          },
        },
      ],
      Tick: [
        {
          from: 'Open',
          to: 'Ticked',
          then: () => {
            throw new Error('tick handler is broken');
          },
        },
      ],
      Finish: [{ from: ['Open', 'Ticked'], to: 'Done' }],
    },
  });
}

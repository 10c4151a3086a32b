import { pino } from 'pino';
import { describe, expect, it } from 'vitest';
import { createEngineEvents } from './engine-events.ts';

const ref = { runId: 'r', rowId: 'w', sequence: 1, name: 'step', attempt: 1 };

describe('engine events', () => {
  it('says whether an event has a listener, as listeners come and go', () => {
    const { emitter, emit } = createEngineEvents(pino({ level: 'silent' }), async () => undefined);
    expect(emit.listens('action.completed')).toBe(false);
    const off = emitter.on('action.completed', () => undefined);
    expect(emit.listens('action.completed')).toBe(true);
    expect(emit.listens('action.started')).toBe(false);
    off();
    expect(emit.listens('action.completed')).toBe(false);
  });

  it('delivers to every listener in order, awaiting each, and one that throws stops none', async () => {
    const journal: unknown[] = [];
    const { emitter, emit } = createEngineEvents(pino({ level: 'silent' }), async (a) => void journal.push(a));
    const seen: string[] = [];
    emitter.on('action.completed', async (e) => {
      await new Promise((resolve) => setTimeout(resolve, 5));
      seen.push(`first ${JSON.stringify(e.output)}`);
    });
    emitter.on('action.completed', () => {
      throw new Error('listener failed');
    });
    emitter.on('action.completed', (e) => void seen.push(`third ${JSON.stringify(e.output)}`));
    await emit('action.completed', { ...ref, output: 'out' });
    expect(seen).toEqual(['first "out"', 'third "out"']);
    expect(journal).toEqual([]);
  });

  it('with nobody listening, emitting hands back one promise already settled', async () => {
    const { emit } = createEngineEvents(pino({ level: 'silent' }), async () => undefined);
    const first = emit('action.started', ref);
    expect(first).toBe(
      emit('run.finished', { runId: 'r', flowName: 'f', status: 'Completed', output: 1, error: null }),
    );
    await expect(first).resolves.toBeUndefined();
  });
});

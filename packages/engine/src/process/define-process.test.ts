import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { parseEngineConfig } from '../runtime/engine-config.ts';
import { decide } from './decide.ts';
import { defineProcess } from './define-process.ts';
import { describeProcess } from './describe-process.ts';
import type { StandardSchemaV1 } from '../definitions/standard-schema.ts';
import { parseMessage } from './parse-message.ts';
import { parseOperatorCommand } from './run-operator-command.ts';

const base = {
  name: 'door',
  states: ['Closed', 'Open', 'Gone'] as const,
  initial: 'Closed' as const,
  final: ['Gone'] as const,
  data: z.object({ opens: z.number() }),
  initialData: () => ({ opens: 0 }),
  messages: { Push: z.object({ door: z.string(), force: z.number() }), Remove: z.object({ door: z.string() }) },
  correlate: (m: { payload: { door: string } }) => m.payload.door,
};

describe('defineProcess', () => {
  it('refuses a definition naming unknown states, messages or timeouts, or leaving a final state', () => {
    expect(() => defineProcess({ ...base, initial: 'Ajar' as never, on: {} })).toThrow(
      /initial names unknown state "Ajar"/,
    );
    expect(() => defineProcess({ ...base, on: { Kick: [{ from: 'Closed', to: 'Open' }] } as never })).toThrow(
      /transitions on unknown message "Kick"/,
    );
    expect(() => defineProcess({ ...base, on: { Push: [{ from: 'Gone', to: 'Open' }] } })).toThrow(
      /leaves final state "Gone"/,
    );
    expect(() =>
      defineProcess({ ...base, on: { Push: [{ from: 'Closed', to: 'Open', schedule: ['Tick'] }] } }),
    ).toThrow(/unknown timeout "Tick"/);
    expect(() =>
      defineProcess({ ...base, compensating: { Open: ['Gone'] }, on: { Push: [{ from: 'Closed', to: 'Open' }] } }),
    ).toThrow(/compensating state "Open" has no transition to "Gone"/);
    expect(() =>
      defineProcess({
        ...base,
        on: {},
        operatorInputs: { Restore: z.object({}) },
        operatorCommands: { Restore: { from: ['Closed', 'Gone'], to: 'Closed', description: 'put it back' } },
      }),
    ).toThrow(/operator command "Restore" leaves final state "Gone"/);
  });

  it('guards choose among transitions in order; a failing guard on all is a recorded no-op reason', () => {
    const door = defineProcess({
      ...base,
      on: {
        Push: [
          {
            from: 'Closed',
            to: 'Open',
            guard: (_d, p) => p.force > 5,
            then: (d) => ({ data: { opens: d.opens + 1 } }),
          },
          { from: 'Closed', to: 'Gone', guard: (_d, p) => p.force > 100 },
        ],
      },
    });
    expect(
      decide(door, { state: 'Closed', data: { opens: 0 } }, { type: 'Push', payload: { door: 'd', force: 10 } }),
    ).toMatchObject({
      kind: 'applied',
      to: 'Open',
      data: { opens: 1 },
      completes: false,
    });
    expect(
      decide(door, { state: 'Closed', data: { opens: 0 } }, { type: 'Push', payload: { door: 'd', force: 1 } }),
    ).toEqual({
      kind: 'ignored',
      state: 'Closed',
      reason: 'guard_rejected',
    });
  });

  it('parseMessage names the bad field', async () => {
    const door = defineProcess({ ...base, on: {} });
    await expect(parseMessage(door, { type: 'Push', payload: {} })).rejects.toThrow(/message\.id is required/);
    await expect(parseMessage(door, { id: 'm', type: 'Pull', payload: {} })).rejects.toThrow(/message\.type "Pull"/);
    await expect(parseMessage(door, { id: 'm', type: 'Push', payload: { door: 'd', force: 'hard' } })).rejects.toThrow(
      /message\.payload\.force/,
    );
    await expect(
      parseMessage(door, { id: 'm', type: 'Push', payload: { door: 'd', force: 1 }, position: 1.5 }),
    ).rejects.toThrow(/message\.position/);
    expect(
      await parseMessage(door, { id: 'm', type: 'Push', payload: { door: 'd', force: 1 }, position: 7 }),
    ).toMatchObject({ position: 7n });
  });

  it('message and operator-command schemas take any Standard Schema validator, an asynchronous one too', async () => {
    const door = defineProcess({
      ...base,
      messages: { ...base.messages, Knock: knock },
      on: { Knock: [{ from: 'Closed', to: 'Closed', then: (d, p) => ({ data: { opens: d.opens + p.times } }) }] },
      operatorInputs: { Seal: sealInput },
      operatorCommands: { Seal: { from: ['Closed'], to: 'Gone' } },
    });
    await expect(parseMessage(door, { id: 'k', type: 'Knock', payload: { door: 'd', times: 0 } })).rejects.toThrow(
      'process "door": message.payload.times must knock at least once',
    );
    // What is delivered is what the validator produced (its default filled).
    expect(await parseMessage(door, { id: 'k', type: 'Knock', payload: { door: 'd' } })).toMatchObject({
      payload: { door: 'd', times: 1 },
    });
    const seal = (input: unknown) =>
      parseOperatorCommand(door, '00000000-0000-4000-8000-000000000001', {
        command: 'Seal',
        input,
        expectedState: 'Closed',
        operator: 'ops',
        reason: 'sealed for good',
        idempotencyKey: 'k1',
      });
    await expect(seal({})).rejects.toMatchObject({ code: 'invalid_input', field: 'input.why' });
    expect((await seal({ why: 'condemned' })).input).toEqual({ why: 'condemned' });
    // A validator without a JSON Schema converter gets no form: the console falls back to JSON.
    expect(describeProcess(door).operatorCommands).toMatchObject([{ name: 'Seal', inputSchema: null }]);
  });
});

/** A hand-written, asynchronous Standard Schema (no library): `times` defaults to 1 and must be >= 1. */
const knock: StandardSchemaV1<unknown, { door: string; times: number }> = {
  '~standard': {
    version: 1,
    vendor: 'hand-written',
    validate: async (v) => {
      await Promise.resolve();
      const p = v as { door?: unknown; times?: unknown };
      if (typeof p.door !== 'string') return { issues: [{ message: 'must be a string', path: ['door'] }] };
      const times = p.times ?? 1;
      if (typeof times !== 'number' || times < 1)
        return { issues: [{ message: 'must knock at least once', path: [{ key: 'times' }] }] };
      return { value: { door: p.door, times } };
    },
  },
};
const sealInput: StandardSchemaV1<unknown, { why: string }> = {
  '~standard': {
    version: 1,
    vendor: 'hand-written',
    validate: (v) =>
      typeof (v as { why?: unknown }).why === 'string'
        ? { value: { why: (v as { why: string }).why } }
        : { issues: [{ message: 'a reason to seal it is required', path: ['why'] }] },
  },
};

describe('processes config', () => {
  it('quarantine is off unless a budget is given; zero, negative and null budgets are refused by name', () => {
    expect(parseEngineConfig({}).processes.quarantine_after_seconds).toBeUndefined();
    expect(parseEngineConfig({ processes: { quarantine_after_seconds: 300 } }).processes.quarantine_after_seconds).toBe(
      300,
    );
    for (const bad of [0, -1, null, 1.5]) {
      expect(() => parseEngineConfig({ processes: { quarantine_after_seconds: bad } })).toThrow(
        /"processes\.quarantine_after_seconds"/,
      );
    }
  });

  it('store retries default to 10 attempts from 100 ms to 2 s; one attempt means none', () => {
    expect(parseEngineConfig({}).processes.store_retry).toEqual({
      max_attempts: 10,
      base_delay_ms: 100,
      max_delay_ms: 2000,
    });
    expect(
      parseEngineConfig({ processes: { store_retry: { max_attempts: 1 } } }).processes.store_retry.max_attempts,
    ).toBe(1);
    expect(() => parseEngineConfig({ processes: { store_retry: { max_attempts: 0 } } })).toThrow(
      /store_retry\.max_attempts/,
    );
  });
});

describe('describeProcess', () => {
  it('gives the console the state table and a JSON Schema per operator command', () => {
    const door = defineProcess({
      ...base,
      timeouts: { Creak: { afterMs: 1000, expects: 'Open' } },
      on: { Push: [{ from: 'Closed', to: 'Open', schedule: ['Creak'] }], Creak: [{ from: 'Open', to: 'Closed' }] },
      operatorInputs: { Unhinge: z.object({ why: z.string().min(3) }) },
      operatorCommands: { Unhinge: { from: ['Open', 'Closed'], to: 'Gone', description: 'Take the door off.' } },
    });
    const d = describeProcess(door);
    expect(JSON.parse(JSON.stringify(d))).toEqual(d);
    expect(d.transitions).toEqual([
      { on: 'Push', kind: 'message', from: ['Closed'], to: 'Open', late: false, guarded: false },
      { on: 'Creak', kind: 'timeout', from: ['Open'], to: 'Closed', late: false, guarded: false },
    ]);
    expect(d.operatorCommands[0]).toMatchObject({
      name: 'Unhinge',
      to: 'Gone',
      inputSchema: { type: 'object', properties: { why: { type: 'string', minLength: 3 } }, required: ['why'] },
    });
  });
});

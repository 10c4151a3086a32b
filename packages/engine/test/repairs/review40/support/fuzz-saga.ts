import { randomUUID } from 'node:crypto';
import { expect } from 'vitest';
import { defineAction, defineFlow, type RepairCommand } from '../../../../src/index.ts';
import type { RunDetail } from '../../../../src/runtime/run-view.ts';
import type { openTestEngine } from '../../../support/open-test-engine.ts';

/**
 * Review 40: a three-step saga whose actions the test scripts per run (succeed, fail, or hang on a
 * gate the test opens), each undone by a compensation that logs every time it runs.
 */
export type Behaviour = 'ok' | 'fail' | 'gate';

export interface Script {
  steps: Behaviour[];
}

/** Per run key: what each step does. */
export const scripts = new Map<string, Script>();
/** Per run key and step: the gate a hanging action waits at (resolve true to succeed, false to fail). */
export const gates = new Map<string, (ok: boolean) => void>();
/** Every compensation run, in the order they ran: `${key}:${step}`. */
export const undone: string[] = [];

function forward(step: number) {
  return defineAction({
    name: `r40-step-${step}`,
    run: async (i: { key: string }) => {
      const b = scripts.get(i.key)?.steps[step - 1] ?? 'ok';
      if (b === 'fail') throw new Error(`step ${step} failed`);
      if (b === 'gate') {
        const ok = await new Promise<boolean>((resolve) => gates.set(`${i.key}:${step}`, resolve));
        if (!ok) throw new Error(`step ${step} failed at its gate`);
      }
      return { step, by: 'worker' };
    },
  });
}

function backward(step: number) {
  return defineAction({
    name: `r40-undo-${step}`,
    run: async (i: { key: string }) => {
      undone.push(`${i.key}:${step}`);
      return null;
    },
  });
}

export const steps = [forward(1), forward(2), forward(3)] as const;
export const undos = [backward(1), backward(2), backward(3)] as const;

export const saga = defineFlow({
  name: 'r40-saga',
  version: 1,
  run: async (ctx, i: { key: string }) => {
    try {
      for (let s = 0; s < 3; s++)
        await ctx
          .action(steps[s]!, { key: i.key })
          .compensateWith(undos[s]!, () => ({ key: i.key }))
          .run();
      return { done: true };
    } catch (err) {
      await ctx.compensate();
      throw err;
    }
  },
});

export const fuzzActions = [...steps, ...undos];

type T = Awaited<ReturnType<typeof openTestEngine>>;

export const who = { actor: 'r40-operator', reason: 'review 40 fuzz' };

/** A repair drafted against the detail the operator last read (possibly stale by now). */
export function draft(kind: string, seen: RunDetail, sequence: number): RepairCommand {
  const common = { ...who, idempotencyKey: randomUUID() };
  const step = seen.actions.find((a) => a.sequence === sequence);
  const stepExpected = {
    runStatus: seen.run.status,
    stepStatus: step?.status ?? 'Pending',
    stepAttempts: step?.attempts ?? 0,
  };
  switch (kind) {
    case 'run.retry_step':
    case 'run.reclaim_step':
    case 'run.resume_from_step':
      return {
        kind,
        target: { runId: seen.run.id, stepSequence: sequence },
        expected: stepExpected,
        ...common,
      } as RepairCommand;
    case 'run.complete_step':
      return {
        kind,
        target: { runId: seen.run.id, stepSequence: sequence },
        expected: stepExpected,
        output: { step: sequence, by: 'operator' },
        ...common,
      } as RepairCommand;
    case 'run.signal':
      return {
        kind,
        target: { runId: seen.run.id },
        expected: { runStatus: seen.run.status },
        signal: { name: 'nudge', payload: { n: 1 } },
        ...common,
      } as RepairCommand;
    default:
      return {
        kind,
        target: { runId: seen.run.id },
        expected: { runStatus: seen.run.status },
        ...common,
      } as RepairCommand;
  }
}

const terminalEvents = ['run.finished', 'run.terminated'];

/** The invariants every sequence must leave true once the run has settled (or parked with a reason). */
export async function checkInvariants(t: T, runId: string, key: string, applied: string[]): Promise<void> {
  const p = t.db.prisma;
  const run = await p.flowRun.findUniqueOrThrow({ where: { id: runId } });
  const events = await p.flowEvent.findMany({ where: { run_id: runId }, orderBy: { id: 'asc' } });
  const history = events.map((e) => `${e.type}${e.sequence === null ? '' : `#${e.sequence}`}`).join(', ');

  // 1. Nothing is written after a run's terminal event, and it has at most one.
  const ends = events.filter((e) => terminalEvents.includes(e.type));
  expect(ends.length, `at most one terminal event: ${history}`).toBeLessThanOrEqual(1);
  if (ends.length === 1) {
    const at = events.indexOf(ends[0]!);
    const after = events.slice(at + 1).filter((e) => e.type !== 'repair.applied');
    expect(
      after.map((e) => e.type),
      `no event after the terminal one: ${history}`,
    ).toEqual([]);
  }

  // 2. Each step has at most one recorded outcome per attempt (per history epoch of the row).
  const outcomes = new Map<string, number>();
  for (const e of events) {
    if (!/^(action|compensation)\.(completed|failed|expired)$/.test(e.type)) continue;
    const d = e.data as { attempt?: number };
    const k = `${e.type.split('.')[0]}:${e.row_id}:${d.attempt ?? '?'}`;
    outcomes.set(k, (outcomes.get(k) ?? 0) + 1);
  }
  for (const [k, n] of outcomes) expect(n, `one outcome per attempt for ${k}: ${history}`).toBe(1);

  // 3. Compensations run only for completed steps, newest first, each once.
  const stepsNow = await p.actionRun.findMany({
    where: { run_id: runId, kind: 'action' },
    orderBy: { sequence: 'asc' },
  });
  const comps = await p.compensationRun.findMany({ where: { run_id: runId } });
  for (const c of comps) {
    const s = stepsNow.find((x) => x.sequence === c.action_sequence);
    expect(s?.status, `compensation ${c.name} undoes a completed step: ${history}`).toBe('Completed');
  }
  const mine = undone.filter((u) => u.startsWith(`${key}:`)).map((u) => Number(u.split(':')[1]));
  expect(new Set(mine).size, `each compensation runs once: ${mine.join(',')} / ${history}`).toBe(mine.length);
  expect(mine, `compensations newest first: ${history}`).toEqual([...mine].sort((a, b) => b - a));
  for (const m of mine)
    expect(stepsNow.find((x) => x.sequence === m)?.status, `undo-${m} ran for a completed step: ${history}`).toBe(
      'Completed',
    );

  // 4. Every applied repair has exactly one audit row saying so.
  for (const id of applied) {
    const rows = await p.repairCommand.findMany({ where: { id } });
    expect(
      rows.map((r) => r.status),
      `repair ${id} audited once as applied`,
    ).toEqual(['applied']);
  }

  // 5. An open run is visibly moving or says why not.
  if (!run.finished_at) {
    const jobs = await p.job.count({ where: { run_id: runId } });
    const running = stepsNow.some((s) => s.status === 'Running');
    expect(
      jobs > 0 || running || run.stuck_reason !== null || run.waiting_for !== null,
      `open run ${run.status} has a job, a running step, a stuck_reason or a waiting_for: ${history}`,
    ).toBe(true);
  }
}

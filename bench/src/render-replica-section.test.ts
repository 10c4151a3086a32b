import { describe, expect, it } from 'vitest';
import { renderReplicaSection } from './render-replica-section.ts';
import type { ReplicaResult } from './run-replica-phase.ts';

function row(processes: number, flowsPerSecond: number, machine: number, other = 0): ReplicaResult {
  return {
    processes,
    concurrencyPerProcess: 8,
    backlog: 64,
    startupMs: 3000,
    flows: flowsPerSecond * 8,
    windowMs: 8000,
    flowsPerSecond,
    minOpen: 60,
    cores: { workers: machine / 2, starter: 0.1, postgres: machine / 2 - 0.1 - other, machine, other },
    machineCores: 2,
    workerErrors: processes === 4 ? 3 : 0,
  };
}

describe('renderReplicaSection', () => {
  it('gives each row its growth over one process and says 2 ÷ 1 and 4 ÷ 1', () => {
    const markdown = renderReplicaSection([row(1, 40, 1.2), row(2, 60, 1.5), row(4, 50, 1.7)], 'fsync=on');
    expect(markdown).toContain('| 2 | 2 × 8 | 60 | 1.50× |');
    expect(markdown).toContain('| 4 | 4 × 8 | 50 | 1.25× | 60 of 64 |');
    expect(markdown).toContain('Growth: 2 processes ÷ 1 = 1.50×, 4 processes ÷ 1 = 1.25×.');
    expect(markdown).toMatch(/\| 3 \| 3\.0 \|$/m);
  });

  it('says the CPU is the ceiling only when the machine was at least 0.9 of its cores busy', () => {
    expect(renderReplicaSection([row(1, 40, 1.2), row(2, 60, 1.79)], '')).not.toContain('the CPU is the ceiling');
    const saturated = renderReplicaSection([row(1, 40, 1.2), row(2, 60, 1.9)], '');
    expect(saturated).toContain('they were 1.90 busy at 2 process(es): the CPU is the ceiling');
  });

  it("warns when other processes' CPU could have lowered the rates", () => {
    expect(renderReplicaSection([row(1, 40, 1.2, 0.1)], '')).not.toContain('Other processes kept');
    expect(renderReplicaSection([row(1, 40, 1.2, 0.5)], '')).toContain('Other processes kept up to 0.50 cores busy');
  });
});

import type { Database } from '../db/database.ts';
import { enqueueJob } from '../store/enqueue-job.ts';
import { SimulatedCrash, type ClaimedStep, type Faults } from '../runtime/runtime-deps.ts';

type Rule = { action: string; remaining: number; apply: (step: ClaimedStep) => Promise<void> | void };

/**
 * Fault injection for tests: each rule fires for a named action (or compensation) a set number of
 * times. Pass `plan.faults` to createEngine (the test kit does).
 */
export class FaultPlan {
  private readonly beforeClaimRules: Rule[] = [];
  private readonly afterClaimRules: Rule[] = [];
  private readonly beforeOutcomeRules: Rule[] = [];

  constructor(private readonly db: Database) {}

  readonly faults: Faults = {
    beforeClaim: (step) => fire(this.beforeClaimRules, step),
    afterClaim: (step) => fire(this.afterClaimRules, step),
    beforeOutcome: (step) => fire(this.beforeOutcomeRules, step),
  };

  /** This worker reaches the claim late: it waits for `until` first (a rival gets there before it). */
  delayClaim(action: string, until: () => Promise<unknown>, times = 1): this {
    this.beforeClaimRules.push({ action, remaining: times, apply: async () => void (await until()) });
    return this;
  }

  /** The worker dies right after its claim committed: the row stays Running, the job is not acknowledged. */
  crashAfterClaim(action: string, times = 1): this {
    this.afterClaimRules.push({
      action,
      remaining: times,
      apply: () => Promise.reject(new SimulatedCrash(`simulated crash after claiming ${action}`)),
    });
    return this;
  }

  /** Another worker takes the row over while this one runs the action: this one's outcome is rejected. */
  loseClaim(action: string, times = 1): this {
    this.beforeOutcomeRules.push({
      action,
      remaining: times,
      apply: async (step) => {
        const table = step.table === 'action_runs' ? this.db.prisma.actionRun : this.db.prisma.compensationRun;
        await (table as typeof this.db.prisma.actionRun).update({
          where: { id: step.rowId },
          data: { attempts: { increment: 1 }, claimed_by: 'fault:other-worker' },
        });
      },
    });
    return this;
  }

  /** This worker is slow to report: it waits `ms` (or until `until` resolves) before writing its outcome. */
  straggle(action: string, wait: number | (() => Promise<void>), times = 1): this {
    this.beforeOutcomeRules.push({
      action,
      remaining: times,
      apply: () => (typeof wait === 'number' ? new Promise((r) => setTimeout(r, wait)) : wait()),
    });
    return this;
  }

  /** The queue delivers the run's wake `times` more times (at-least-once delivery). */
  async duplicateDelivery(runId: string, times = 1, at: Date = new Date(0)): Promise<void> {
    for (let i = 0; i < times; i++) await enqueueJob(this.db.prisma, { kind: 'wake-run', runId, availableAt: at });
  }
}

async function fire(rules: Rule[], step: ClaimedStep): Promise<void> {
  const rule = rules.find((r) => r.action === step.name && r.remaining > 0);
  if (!rule) return;
  rule.remaining -= 1;
  await rule.apply(step);
}

import type { RepairKind } from './repair-command.ts';

export interface RepairCommandInfo {
  /** What the command acts on: a run, one step of a run, a process instance, or one outbox row. */
  target: 'run' | 'step' | 'instance' | 'outbox';
  /** Undoes or overrides recorded work: a candidate for a second operator's approval (ADR 0016). */
  destructive: boolean;
  /** Only an admin may draft it (the control plane enforces roles; the engine states which). */
  adminOnly: boolean;
  /** What it does, in a sentence an operator on call can act on. */
  description: string;
}

/** The repair catalogue: every command the engine can apply, with what a caller needs to gate it. */
export const repairCatalogue: Readonly<Record<RepairKind, RepairCommandInfo>> = {
  'run.kick': {
    target: 'run',
    destructive: false,
    adminOnly: false,
    description:
      'Send a fresh job for the step the run is parked on (skipped while that step is Running and not stale).',
  },
  'run.retry_step': {
    target: 'step',
    destructive: false,
    adminOnly: false,
    description: 'Retry a Failed step now instead of at its retry time, or give an Errored last step one more try.',
  },
  'run.reclaim_step': {
    target: 'step',
    destructive: false,
    adminOnly: false,
    description:
      "Reclaim a Running step whose worker is gone: it runs again, and the dead worker's late outcome is rejected.",
  },
  'run.cancel': {
    target: 'run',
    destructive: false,
    adminOnly: false,
    description: 'Cancel the run cooperatively: its code may compensate what it did within the cleanup window.',
  },
  'run.terminate': {
    target: 'run',
    destructive: true,
    adminOnly: false,
    description: 'Close the run now as Terminated, without cleanup or compensation (its propagate children too).',
  },
  'run.signal': {
    target: 'run',
    destructive: false,
    adminOnly: false,
    description: 'Send the run a named signal with a payload; it waits in the run until the code awaits it.',
  },
  'run.expire': {
    target: 'run',
    destructive: false,
    adminOnly: false,
    description: 'Expire the run now, as if its business deadline had passed: its rollback is planned and started.',
  },
  'run.complete_step': {
    target: 'step',
    destructive: true,
    adminOnly: false,
    description:
      'Record an action step as Completed with an output the operator supplies (a worker still holding it is rejected).',
  },
  'run.resume_from_step': {
    target: 'step',
    destructive: true,
    adminOnly: false,
    description:
      'Forget a recorded step and those after it, so the run re-runs them with the code deployed now (replay-blocked runs too).',
  },
  'instance.release': {
    target: 'instance',
    destructive: false,
    adminOnly: false,
    description:
      'Release a quarantined instance: retry the message it stopped on, or skip it (the skipped message is kept in its history).',
  },
  'instance.command': {
    target: 'instance',
    destructive: false,
    adminOnly: false,
    description: "Apply one of the process definition's own typed operator commands.",
  },
  'instance.force_transition': {
    target: 'instance',
    destructive: true,
    adminOnly: true,
    description: 'Move the instance to a named state without a message, keeping its data (admin only).',
  },
  'outbox.requeue': {
    target: 'outbox',
    destructive: false,
    adminOnly: false,
    description:
      'Send a Dead outbox message again (same message id) on the next publisher pass, once its downstream is fixed.',
  },
};

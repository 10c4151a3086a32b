/**
 * Run statuses as the engine names them. Duplicated from the engine on purpose: the console may
 * not import engine code, and a status it does not know still renders (as a neutral badge).
 */
export const openRunStatuses = ['Pending', 'Running', 'Waiting', 'Compensating'] as const;
export const terminalRunStatuses = [
  'Completed',
  'Failed',
  'Compensated',
  'Expired',
  'Cancelled',
  'Terminated',
  'TimedOut',
] as const;
export const allRunStatuses = [...openRunStatuses, ...terminalRunStatuses] as const;
export type RunStatus = (typeof allRunStatuses)[number];

export function isRunStatus(value: string): value is RunStatus {
  return (allRunStatuses as readonly string[]).includes(value);
}

/** A run is open (still worth polling) until it reaches a terminal status. */
export function isOpenRun(status: string | undefined): boolean {
  return status === undefined || !(terminalRunStatuses as readonly string[]).includes(status);
}

export type Tone = 'ok' | 'bad' | 'warn' | 'active' | 'waiting' | 'muted';

const runTones: Record<string, Tone> = {
  Pending: 'waiting',
  Running: 'active',
  Waiting: 'waiting',
  Compensating: 'warn',
  Completed: 'ok',
  Failed: 'bad',
  Compensated: 'warn',
  Expired: 'bad',
  Cancelled: 'muted',
  Terminated: 'muted',
  TimedOut: 'bad',
};

// For a step, Failed is the pause between its own retries; Errored is the final failure.
const actionTones: Record<string, Tone> = { ...runTones, Failed: 'warn', Errored: 'bad', Expired: 'bad' };

export function toneFor(kind: 'run' | 'step', status: string): Tone {
  return (kind === 'run' ? runTones : actionTones)[status] ?? 'muted';
}

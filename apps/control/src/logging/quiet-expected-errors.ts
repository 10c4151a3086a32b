import type { LogFn, Logger } from 'pino';

/**
 * Errors thrown on purpose to show a feature (the demo's poison notes, which the fulfilment process
 * cannot handle and quarantines): the engine logs them like any failure, at warn with a stack. They
 * are expected, so they are logged at info with their message only; anything else is unchanged.
 */
const expectedErrorNames = new Set(['PoisonNoteError']);

const levelWarn = 40;

function isExpected(value: unknown): value is Error {
  return value instanceof Error && expectedErrorNames.has(value.name);
}

/** A pino `hooks.logMethod`: rewrites a warn-or-worse record about an expected error to info, stackless. */
export function quietExpectedErrors(this: Logger, args: Parameters<LogFn>, method: LogFn, level: number): void {
  const [first, ...rest] = args;
  if (level >= levelWarn && typeof first === 'object' && first !== null && 'err' in first) {
    const { err, ...fields } = first;
    if (isExpected(err)) {
      this.info({ ...fields, expected: `${err.name}: ${err.message}` }, ...(rest as [string]));
      return;
    }
  }
  method.apply(this, args);
}

import { z } from 'zod';

/**
 * The keyset cursors of a run's and an instance's history (ADR 0035): each is the unique order key
 * of the last row a page showed, handed back as it was given. A step's sequence; a compensation's
 * rollback level and ordinal; an event's or a transition's id, a bigint written in decimal digits
 * (JSON cannot carry it as a number) and compared as a bigint, never as text.
 */
export const sequenceKey = z.number().int().min(0).max(2_147_483_647);

export const compensationKey = z
  .object({ level: z.number().int().min(0).max(2_147_483_647), ordinal: z.number().int().min(0).max(2_147_483_647) })
  .strict();

const maxBigint = 9_223_372_036_854_775_807n;

export const bigintIdKey = z
  .string()
  .regex(/^[0-9]{1,19}$/, { message: 'must be an id as this API handed it out (decimal digits)' })
  // Zod runs this even when the pattern failed: only digits are read as a number.
  .refine((s) => !/^[0-9]+$/.test(s) || BigInt(s) <= maxBigint, { message: 'is past the largest id' });

/** A `bigintIdKey` as the bigint it names (the input checked it fits). */
export const bigintOf = (key: string | undefined) => (key === undefined ? undefined : BigInt(key));

/** Refuses `before` and `after` together, naming `after`: a window reads one way from one key. */
export function oneBound(input: { before?: unknown; after?: unknown }, ctx: z.RefinementCtx): void {
  if (input.before !== undefined && input.after !== undefined)
    ctx.addIssue({
      code: 'custom',
      path: ['after'],
      message: 'give before (older rows) or after (newer rows), not both',
    });
}

/** Page sizes: what a page carries by default, and the most a caller may ask for. */
export const historyPageSizes = {
  steps: { default: 50, max: 200 },
  compensations: { default: 50, max: 200 },
  events: { default: 100, max: 500 },
  transitions: { default: 50, max: 500 },
  /** New rows of each kind per poll of an open run. */
  changes: { default: 200, max: 500 },
} as const;

/** The `limit` input of one kind of history page. */
export const pageLimit = (size: { default: number; max: number }) =>
  z.number().int().min(1).max(size.max).default(size.default);

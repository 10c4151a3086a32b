import pg from 'pg';
import { Prisma } from '../generated/prisma/client.ts';
import { wallClockAsUtc } from './wall-clock-as-utc.ts';

/**
 * How a raw transaction's parameters go out and its columns come back, so that a store function
 * sees exactly what Prisma's raw path (`$queryRaw` through its driver adapters) gave it: int8 as
 * BigInt, numeric as Prisma.Decimal, timestamp and timestamptz as Date, json/jsonb parsed
 * (JSON.parse of the server's text: doubles exact), int4 as number, uuid and text as strings,
 * arrays as arrays of the same. Applied per statement, never to the driver's global parsers: the
 * Prisma adapter on the same pool keeps its own (ADR 0039).
 *
 * Dates follow Prisma's adapters to the letter, zone handling included: a Date goes out as its UTC
 * wall-clock time WITHOUT a zone, which the server reads in the session's TimeZone, and a
 * timestamptz comes back with its offset replaced by UTC's. On a server whose TimeZone is UTC (the
 * default) that is exact; on any other, both paths store the same shifted instant and read it back
 * as it was given, so rows written by either are read alike by both (test
 * `regressions/hotsql/load-on-a-non-utc-server.pg.test.ts`). Sending true instants here while the
 * rest of the engine and the control plane go through Prisma would break that agreement.
 */

const oid = {
  int8: 20,
  numeric: 1700,
  timestamp: 1114,
  timestamptz: 1184,
  int8Array: 1016,
  numericArray: 1231,
  timestampArray: 1115,
  timestamptzArray: 1185,
} as const;

/** pg's text[] parser splits a one-dimensional array literal into its elements' texts (null stays null). */
const defaultParser = pg.types.getTypeParser as (typeId: number, format: 'text') => (text: string) => unknown;
const textArray = defaultParser(1009, 'text') as (text: string) => (string | null)[];
const parseArray = (text: string, element: (s: string) => unknown): unknown[] =>
  textArray(text).map((e) => (e === null ? null : element(e)));
const int8 = (text: string) => BigInt(text);
const numeric = (text: string) => new Prisma.Decimal(text);
const timestamp = (text: string) => wallClockAsUtc(text, false) ?? new Date(`${text.replace(' ', 'T')}+00:00`);
const timestamptz = (text: string) =>
  wallClockAsUtc(text, true) ?? new Date(text.replace(' ', 'T').replace(/[+-]\d{2}(:\d{2})?$/, '+00:00'));

/** Our parsers by type oid (text format); every other type keeps the driver's default. */
const parsers: Record<number, (text: string) => unknown> = {
  [oid.int8]: int8,
  [oid.numeric]: numeric,
  [oid.timestamp]: timestamp,
  [oid.timestamptz]: timestamptz,
  [oid.int8Array]: (text) => parseArray(text, int8),
  [oid.numericArray]: (text) => parseArray(text, numeric),
  [oid.timestampArray]: (text) => parseArray(text, timestamp),
  [oid.timestamptzArray]: (text) => parseArray(text, timestamptz),
};

/**
 * How a column of type `typeId` is read from its text: our parser, else pg's default (json parsed,
 * int4 as number). Text format only: these statements never ask for binary results.
 */
export const rawTextParser = (typeId: number): ((text: string) => unknown) =>
  parsers[typeId] ?? defaultParser(typeId, 'text');

/** PGlite's per-query `parsers` option (its defaults already give json parsed and int4 as number). */
export const pgliteRawParsers: Record<number, (text: string) => unknown> = parsers;

const pad = (n: number, width = 2) => String(n).padStart(width, '0');

/** A Date as Prisma's adapters send it: UTC wall-clock time, milliseconds only when there are some, no zone. */
function prismaDateTime(d: Date): string {
  const ms = d.getUTCMilliseconds();
  return (
    `${pad(d.getUTCFullYear(), 4)}-${pad(d.getUTCMonth() + 1)}-${pad(d.getUTCDate())} ` +
    `${pad(d.getUTCHours())}:${pad(d.getUTCMinutes())}:${pad(d.getUTCSeconds())}${ms ? `.${pad(ms, 3)}` : ''}`
  );
}

/**
 * A parameter as Prisma sends it: a Date as {@link prismaDateTime}, arrays element by element; the
 * rest (strings, numbers, BigInt, booleans, null) as the driver serializes them.
 */
export function rawParameter(value: unknown): unknown {
  if (value instanceof Date) return prismaDateTime(value);
  if (Array.isArray(value)) return value.map(rawParameter);
  return value;
}

import fc from 'fast-check';
import { ZodEnum, ZodObject } from 'zod';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import './provided-context.ts';
import { createTestOperator, rawCall, signInCookie, testDatabaseUrl } from './support/test-plane.ts';
import { appRouter } from '../src/api/app-router.ts';
import { parseEnv } from '../src/env.ts';
import { startControlPlane, type ControlPlane } from '../src/start-control-plane.ts';

/** Runs per procedure: bounded so the file stays well under a minute and a half on a loaded 2-core machine. */
const numRuns = 30;

type ProcedureDef = { _def: { type: 'query' | 'mutation' | 'subscription'; inputs?: unknown[] } };

/** The schema under optional / default / prefault wrappers (zod keeps it as `innerType`). */
function unwrapped(schema: unknown): unknown {
  let s = schema as { _zod?: { def?: { innerType?: unknown } } } | undefined;
  while (s?._zod?.def?.innerType) s = s._zod.def.innerType;
  return s;
}

/** A field's valid values when it is an enum, so the fuzz gets past it to the fields behind it. */
function validChoices(schema: unknown): string[] {
  const s = unwrapped(schema);
  return s instanceof ZodEnum ? (s.options as string[]) : [];
}

/**
 * Every procedure the router has, so a new one is fuzzed without touching this file, with the keys of
 * its input object (when it is one) so the fuzz also sends the real keys holding the wrong things.
 * auth.signOut is left out: it takes no input and ends the session it is called with, which would
 * sign the fuzzing admin out of every later call.
 */
const procedures = Object.entries(appRouter._def.procedures as unknown as Record<string, ProcedureDef>)
  .filter(([path, p]) => p._def.type !== 'subscription' && path !== 'auth.signOut')
  .map(([path, p]) => ({
    path,
    type: p._def.type as 'query' | 'mutation',
    fields: (p._def.inputs ?? []).flatMap((input) => {
      const schema = unwrapped(input);
      return schema instanceof ZodObject
        ? Object.entries(schema.shape as Record<string, unknown>).map(([key, field]) => ({
            key,
            choices: validChoices(field),
          }))
        : [];
    }),
  }));

/** Strings the database or JSON handling may choke on: NUL, lone UTF-16 surrogates, any code point. */
const nastyString = fc.oneof(
  fc.string({ unit: 'binary', maxLength: 40 }),
  fc
    .tuple(
      fc.string({ maxLength: 10 }),
      fc.constantFrom('\u0000', '\ud800', '\udfff', '\udfff\ud800'),
      fc.string({ maxLength: 10 }),
    )
    .map((parts) => parts.join('')),
  fc.constantFrom('', ' ', '\u0000', '\ud800', '\udfff', 'a'.repeat(5000)),
);

/** Numbers at and past every bound a schema might have. */
const edgeNumber = fc.oneof(
  fc.integer(),
  fc.double({ noNaN: true, noDefaultInfinity: true }),
  fc.constantFrom(-1, 0, 1e308, -1e308, Number.MAX_SAFE_INTEGER + 2, 2 ** 31, 2 ** 63, 1e-300, 0.5),
);

const leaf = fc.oneof(nastyString, edgeNumber, fc.boolean(), fc.constant(null));

/** Any JSON value, its keys and strings drawn from the nasty strings. */
const jsonish = fc.anything({ key: nastyString, values: [leaf], maxDepth: 3, maxKeys: 5 });

/** An object nested `depth` levels deep (within the default body limit). */
const deeplyNested = fc
  .tuple(fc.integer({ min: 20, max: 120 }), leaf)
  .map(([depth, inner]) => Array.from({ length: depth }).reduce<unknown>((acc) => ({ a: [acc] }), inner));

/** The procedure's own keys (some of them) holding arbitrary values of the wrong type or shape. */
function withRealKeys(fields: { key: string; choices: string[] }[]) {
  if (fields.length === 0) return jsonish;
  const value = (choices: string[]) =>
    choices.length > 0 ? fc.oneof(fc.constantFrom(...choices), leaf, jsonish) : fc.oneof(leaf, jsonish, deeplyNested);
  return fc.record(Object.fromEntries(fields.map(({ key, choices }) => [key, value(choices)])), { requiredKeys: [] });
}

const countedTables = ['flow_runs', 'saga_instances', 'repair_commands', 'operators', 'outbox'] as const;

interface ErrorBody {
  error?: { message?: string; data?: { httpStatus?: number; field?: string | null; code?: string } };
}

/**
 * Issue 9: bad input to any procedure is a 4xx (a 400 naming the field when the input was invalid),
 * never a 5xx, and a refused call changes nothing in the main tables. NUL and lone surrogates reach
 * every string field and key; numbers go past every bound; objects nest deep.
 */
describe('fuzz: every procedure refuses arbitrary input with a 4xx, never a 5xx, and changes nothing', () => {
  let plane: ControlPlane;
  let cookie: string;

  async function rowCounts(): Promise<Record<string, number>> {
    const sql = `select ${countedTables.map((t) => `(select count(*)::int from ${t}) as "${t}"`).join(', ')}`;
    const [row] = await plane.db.prisma.$queryRawUnsafe<Record<string, number>[]>(sql);
    return row ?? {};
  }

  beforeAll(async () => {
    const url = await testDatabaseUrl('fuzz');
    plane = await startControlPlane(parseEnv({ DATABASE_URL: url, CONTROL_PORT: '0', LOG_LEVEL: 'silent' }));
    cookie = await signInCookie(plane.url, await createTestOperator(plane, 'admin'));
  });
  afterAll(async () => {
    await plane?.stop();
  });

  it('fuzzes every procedure but auth.signOut (which ends the session it is called with)', () => {
    expect(procedures.length).toBeGreaterThan(15);
    expect(procedures.map((p) => p.path)).not.toContain('auth.signOut');
    // The real keys are found under the wrappers, so the fuzz reaches each field with the wrong things.
    const fields = (path: string) => procedures.find((p) => p.path === path)?.fields.map((f) => f.key);
    expect(fields('runs.start')).toEqual(['flowName', 'input', 'businessKey', 'tags']);
    expect(fields('runs.page')?.length).toBeGreaterThan(0);
  });

  it.each(procedures)('$path ($type)', async ({ path, type, fields }) => {
    const input = fc.oneof(jsonish, withRealKeys(fields), withRealKeys(fields), deeplyNested);
    let namedFields = 0;
    await fc.assert(
      fc.asyncProperty(input, async (value) => {
        const before = await rowCounts();
        const answer = await rawCall(plane.url, path, { type, input: value, cookie });
        const context = `${path} ${JSON.stringify(value)?.slice(0, 300)} -> ${answer.status} ${JSON.stringify(answer.body).slice(0, 300)}`;
        expect(answer.status, context).toBeLessThan(500);
        if (answer.status < 400) return;
        // 431: Node's HTTP server refused a query's URL as too long before the API saw it; nothing ran.
        if (answer.status === 431) {
          expect(await rowCounts(), context).toEqual(before);
          return;
        }
        const body = answer.body as ErrorBody;
        expect(body.error?.data?.httpStatus, context).toBe(answer.status);
        if (body.error?.data?.code === 'BAD_REQUEST') {
          // Invalid input names the field, under `input`, in data.field and in the message.
          const field = body.error.data.field;
          expect(field, context).toMatch(/^input/);
          expect(body.error.message, context).toContain(field as string);
          namedFields += 1;
        }
        expect(await rowCounts(), context).toEqual(before);
      }),
      { numRuns },
    );
    // The fuzz reached the input validation (and its field-naming check), not only the role check.
    expect(namedFields).toBeGreaterThan(0);
  });
  /** A string holding NUL or a lone surrogate somewhere among arbitrary text. */
  const unstorable = fc
    .tuple(fc.string({ maxLength: 12 }), fc.constantFrom('\u0000', '\ud800', '\udfff'), fc.string({ maxLength: 12 }))
    .map((parts) => parts.join(''));

  /**
   * Inputs valid but for one string field: the fuzz above mostly stops at the first wrong type; these
   * get past the schema's types to where the string would reach the database.
   */
  const oneBadField: { path: string; type: 'query' | 'mutation'; field: string; build: (bad: string) => unknown }[] = [
    { path: 'runs.list', type: 'query', field: 'input.flowName', build: (bad) => ({ flowName: bad }) },
    {
      path: 'instances.list',
      type: 'query',
      field: 'input.processName',
      build: (bad) => ({ status: 'ACTIVE', processName: bad }),
    },
    {
      path: 'runs.start',
      type: 'mutation',
      field: 'input.businessKey',
      build: (bad) => ({ flowName: 'demo.order', input: { orderId: 'o', amount: 1 }, businessKey: bad }),
    },
    {
      path: 'runs.start',
      type: 'mutation',
      field: 'input.input.orderId',
      build: (bad) => ({ flowName: 'demo.order', input: { orderId: bad, amount: 1 } }),
    },
    {
      path: 'operators.create',
      type: 'mutation',
      field: 'input.displayName',
      build: (bad) => ({
        name: 'fuzzed-operator',
        displayName: bad,
        role: 'viewer',
        password: 'long enough password 1',
      }),
    },
    {
      path: 'operators.create',
      type: 'mutation',
      field: 'input.name',
      build: (bad) => ({ name: bad, displayName: 'Fuzzed', role: 'viewer', password: 'long enough password 1' }),
    },
  ];

  it.each(oneBadField)(
    '$path with NUL or a lone surrogate in $field alone: 400 naming it, nothing changed',
    async (c) => {
      await fc.assert(
        fc.asyncProperty(unstorable, async (bad) => {
          const before = await rowCounts();
          const answer = await rawCall(plane.url, c.path, { type: c.type, input: c.build(bad), cookie });
          const context = `${c.path} ${JSON.stringify(c.build(bad))} -> ${answer.status} ${JSON.stringify(answer.body)}`;
          expect(answer.status, context).toBe(400);
          expect((answer.body as ErrorBody).error?.data?.field, context).toBe(c.field);
          expect(await rowCounts(), context).toEqual(before);
        }),
        { numRuns: 15 },
      );
    },
  );
});

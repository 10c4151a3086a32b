import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { schemaJson } from './schema-json.ts';
import type { StandardSchemaV1 } from './standard-schema.ts';

describe('schemaJson', () => {
  it("is a zod schema's input JSON Schema (defaults make a field optional)", () => {
    const json = schemaJson(z.object({ orderId: z.string(), currency: z.string().default('EUR') }));
    expect(json).toMatchObject({
      type: 'object',
      properties: { orderId: { type: 'string' }, currency: { type: 'string', default: 'EUR' } },
      required: ['orderId'],
    });
  });

  it('is null for a validator with no JSON Schema converter, or a schema it cannot express', () => {
    const bare: StandardSchemaV1 = { '~standard': { version: 1, vendor: 'x', validate: (v) => ({ value: v }) } };
    expect(schemaJson(bare)).toBeNull();
    expect(schemaJson(z.object({ at: z.date() }))).toBeNull();
    expect(schemaJson(undefined)).toBeNull();
  });
});

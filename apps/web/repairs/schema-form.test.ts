import { describe, expect, it } from 'vitest';
import { formInput, schemaFields } from './schema-form';

const schema = {
  type: 'object',
  properties: {
    shipmentId: { type: 'string', minLength: 1 },
    count: { type: 'integer' },
    urgent: { type: 'boolean' },
    channel: { type: 'string', enum: ['mail', 'phone'] },
    extra: { type: 'object' },
  },
  required: ['shipmentId', 'count'],
};

describe('formInput', () => {
  it('turns the form text into the command input: numbers, booleans, enums and JSON typed', () => {
    expect(
      formInput(schema, { shipmentId: 'SHP-1', count: '3', urgent: 'true', channel: 'mail', extra: '{"a":1}' }),
    ).toEqual({ ok: true, value: { shipmentId: 'SHP-1', count: 3, urgent: true, channel: 'mail', extra: { a: 1 } } });
  });

  it('names the field it refuses', () => {
    expect(formInput(schema, { shipmentId: 'S', count: '' })).toEqual({ ok: false, error: 'count: required' });
    expect(formInput(schema, { shipmentId: 'S', count: '1.5' })).toEqual({
      ok: false,
      error: 'count: must be a whole number',
    });
    const bad = formInput(schema, { shipmentId: 'S', count: '1', extra: '{' });
    expect(bad.ok).toBe(false);
    expect(!bad.ok && bad.error).toMatch(/^extra: not JSON/);
  });

  it('an empty object schema is an empty input; a schema that is not an object is edited as JSON', () => {
    expect(formInput({ type: 'object', properties: {} }, {})).toEqual({ ok: true, value: {} });
    expect(schemaFields({ type: 'array' })).toBeNull();
    expect(formInput({ type: 'array' }, { '': '[1,2]' })).toEqual({ ok: true, value: [1, 2] });
    expect(formInput(null, {})).toEqual({ ok: true, value: {} });
  });
});

import { describe, expect, it } from 'vitest';
import { serializeError } from './flow-error.ts';

const throwing = () => {
  throw new Error('not for you');
};

describe('serializeError never throws: it runs where a failure is recorded', () => {
  it.each([
    ['a null-prototype object', Object.create(null) as unknown],
    ['an object whose toString throws', { toString: throwing }],
    ['a Proxy whose every trap throws', new Proxy({}, { get: throwing, getPrototypeOf: throwing })],
  ])('%s is recorded as a NonError with a description', (_, value) => {
    const recorded = serializeError(value);
    expect(recorded.name).toBe('NonError');
    expect(recorded.message).toMatch(/without a usable toString/);
  });

  it('an Error whose message cannot be converted (its stack neither, V8 formats it late) is described', () => {
    const err = new TypeError('x');
    Object.defineProperty(err, 'message', { value: Object.create(null) as unknown });
    expect(serializeError(err)).toEqual({ name: 'NonError', message: '[a TypeError without a usable toString]' });
  });

  it('an Error whose name getter throws is described as a thrown value', () => {
    const err = new Error('x');
    Object.defineProperty(err, 'name', { get: throwing });
    expect(serializeError(err).name).toBe('NonError');
  });
});

import { describe, expect, it } from 'vitest';
import { decodeWebhookHeader, encodeWebhookHeader, signWebhook, verifyWebhookSignature } from './sign-webhook.ts';

describe('webhook signatures', () => {
  const secret = 's3cret';
  const now = new Date('2030-01-01T00:00:00Z');
  const ts = Math.floor(now.getTime() / 1000);
  const body = '{"messageId":"m-1","payload":{"amount":42}}';
  const signature = signWebhook(secret, ts, body);
  const verify = (over: Partial<Parameters<typeof verifyWebhookSignature>[0]>) =>
    verifyWebhookSignature({ secret, body, timestamp: String(ts), signature, now, ...over });

  it('is v1= and 64 hex digits, and verifies with the same secret, body and timestamp', () => {
    expect(signature).toMatch(/^v1=[0-9a-f]{64}$/);
    expect(verify({})).toBe(true);
  });

  it.each([
    ['another secret', { secret: 'other' }],
    ['a tampered body', { body: body.replace('42', '4200') }],
    ['a shifted timestamp', { timestamp: String(ts + 1) }],
    ['a timestamp older than the tolerance', { now: new Date(now.getTime() + 301_000) }],
    ['no signature', { signature: undefined }],
    ['no timestamp', { timestamp: undefined }],
    ['a truncated signature', { signature: signature.slice(0, 10) }],
  ])('refuses %s', (_what, over) => {
    expect(verify(over)).toBe(false);
  });
});

describe('webhook header values are ASCII', () => {
  it.each([
    ['order-1/operator:abc/0', 'order-1/operator:abc/0'],
    ['注文-1', '%E6%B3%A8%E6%96%87-1'],
    ['100%', '100%25'],
    ['façade', 'fa%C3%A7ade'],
  ])('%s travels as %s and decodes back', (value, sent) => {
    expect(encodeWebhookHeader(value)).toBe(sent);
    expect(decodeWebhookHeader(encodeWebhookHeader(value))).toBe(value);
  });
});

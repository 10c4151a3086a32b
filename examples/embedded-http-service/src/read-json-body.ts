import type { IncomingMessage } from 'node:http';
import { ServiceError } from './service-error.ts';

/** Reads and parses a JSON request body of at most `limitBytes`. */
export async function readJsonBody(req: IncomingMessage, limitBytes = 16 * 1024): Promise<unknown> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req as AsyncIterable<Buffer>) {
    size += chunk.length;
    // Keep draining past the limit, so the client still gets the 413 instead of a reset connection.
    if (size <= limitBytes) chunks.push(chunk);
  }
  if (size > limitBytes) throw new ServiceError('body_too_large', `the request body exceeds ${limitBytes} bytes`);
  const text = Buffer.concat(chunks).toString('utf8');
  if (text.trim() === '') throw new ServiceError('invalid_json', 'the request body is empty; send a JSON object');
  try {
    return JSON.parse(text) as unknown;
  } catch (err) {
    throw new ServiceError(
      'invalid_json',
      `the request body is not valid JSON (${err instanceof Error ? err.message : String(err)})`,
    );
  }
}

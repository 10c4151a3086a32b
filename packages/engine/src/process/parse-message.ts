import type { z } from 'zod';
import { EngineError } from '../errors/engine-error.ts';
import type { ProcessDefinition } from './define-process.ts';

/** A message from outside: an event or a reply addressed to a process. */
export interface IncomingMessage {
  /** The redelivery key: the same id delivered again is a no-op (the inbox). Required. */
  id: string;
  type: string;
  payload: unknown;
  /** Where the feed assigns one (a global position, an offset): kept in the failure record. */
  position?: number | bigint | null;
  headers?: Record<string, string>;
}

export interface ParsedMessage {
  id: string;
  type: string;
  payload: unknown;
  position: bigint | null;
  headers: Record<string, string>;
}

const operatorPrefix = 'operator:';
const nulMessage = 'contains a NUL character (\\u0000), which the database cannot store';

/** Whether a string anywhere in the value (keys included) holds a NUL, which PostgreSQL text and jsonb refuse. */
function hasNul(value: unknown): boolean {
  if (typeof value === 'string') return value.includes('\u0000');
  if (Array.isArray(value)) return value.some(hasNul);
  if (typeof value === 'object' && value !== null)
    return Object.entries(value).some(([k, v]) => k.includes('\u0000') || hasNul(v));
  return false;
}

function describe(issue: z.core.$ZodIssue | undefined): string {
  return issue?.message ?? 'invalid';
}

/** Refuses, with the offending field named, what no transaction should ever see. */
export function parseMessage(def: ProcessDefinition, raw: unknown): ParsedMessage {
  const bad = (field: string, why: string) =>
    new EngineError('invalid_input', `process "${def.name}": ${field} ${why}`);
  if (typeof raw !== 'object' || raw === null) throw bad('message', 'must be an object');
  const m = raw as Partial<IncomingMessage>;
  if (typeof m.id !== 'string' || m.id.trim() === '') throw bad('message.id', 'is required (a non-empty string)');
  if (m.id.startsWith(operatorPrefix))
    throw bad('message.id', `must not start with "${operatorPrefix}" (reserved for operator commands)`);
  if (m.id.includes('\u0000')) throw bad('message.id', nulMessage);
  if (typeof m.type !== 'string' || m.type === '') throw bad('message.type', 'is required');
  const schema = Object.hasOwn(def.messages, m.type) ? def.messages[m.type] : undefined;
  if (!schema) throw bad('message.type', `"${m.type}" is not a message this process accepts`);
  if (hasNul(m.payload)) throw bad('message.payload', nulMessage);
  const parsed = schema.safeParse(m.payload);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    const path = ['message', 'payload', ...(issue?.path ?? []).map(String)].join('.');
    throw bad(path, describe(issue));
  }
  let position: bigint | null = null;
  if (m.position !== undefined && m.position !== null) {
    if (typeof m.position === 'bigint') position = m.position;
    else if (Number.isSafeInteger(m.position)) position = BigInt(m.position);
    else throw bad('message.position', 'must be an integer');
  }
  if (m.headers !== undefined && (typeof m.headers !== 'object' || m.headers === null))
    throw bad('message.headers', 'must be an object of strings');
  return { id: m.id, type: m.type, payload: parsed.data, position, headers: { ...(m.headers ?? {}) } };
}

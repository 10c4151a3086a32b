import { EngineError } from '../errors/engine-error.ts';
import { assertStorableJson } from '../input/assert-storable-json.ts';
import { assertStorableText } from '../input/assert-storable-text.ts';
import { defaultInputLimits, jsonRules, textRules, type InputLimits } from '../input/input-limits.ts';
import { checkAgainstSchema } from '../input/validate-against-schema.ts';
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
  /** The payload as sent, before the schema: what a failure record and a kept message store (review 29). */
  received: unknown;
  position: bigint | null;
  headers: Record<string, string>;
}

const operatorPrefix = 'operator:';
/** PostgreSQL's bigint: a position outside it could not be stored in the failure record. */
const maxPosition = 2n ** 63n - 1n;

/**
 * Refuses, with the offending field named, what no transaction should ever see: among it, text and
 * payloads the database would refuse or silently change (NUL, lone surrogates, values JSON cannot
 * represent, beyond the configured limits; ADR 0013). The payload is checked as the caller sent it,
 * then by the message type's schema (any Standard Schema validator, which may be asynchronous).
 */
export async function parseMessage(
  def: ProcessDefinition,
  raw: unknown,
  limits: InputLimits = defaultInputLimits,
): Promise<ParsedMessage> {
  const bad = (field: string, why: string) =>
    new EngineError('invalid_input', `process "${def.name}": ${field} ${why}`);
  const storable = <T>(check: () => T): T => {
    try {
      return check();
    } catch (err) {
      if (err instanceof EngineError)
        throw new EngineError(err.code, `process "${def.name}": ${err.message}`, {
          ...(err.field === null ? {} : { field: err.field }),
        });
      throw err;
    }
  };
  if (typeof raw !== 'object' || raw === null) throw bad('message', 'must be an object');
  const m = raw as Partial<IncomingMessage>;
  if (m.id === undefined || m.id === null || (typeof m.id === 'string' && m.id.trim() === ''))
    throw bad('message.id', 'is required (a non-empty string)');
  const id = storable(() => assertStorableText(m.id, 'message.id', textRules(limits)));
  if (id.startsWith(operatorPrefix))
    throw bad('message.id', `must not start with "${operatorPrefix}" (reserved for operator commands)`);
  if (typeof m.type !== 'string' || m.type === '') throw bad('message.type', 'is required');
  storable(() => assertStorableText(m.type, 'message.type', textRules(limits)));
  const schema = Object.hasOwn(def.messages, m.type) ? def.messages[m.type] : undefined;
  if (!schema) throw bad('message.type', `"${m.type}" is not a message this process accepts`);
  storable(() => assertStorableJson(m.payload, 'message.payload', jsonRules(limits, 'message_payload_bytes')));
  const parsed = await checkAgainstSchema(schema, m.payload, 'message.payload');
  if (!parsed.ok) throw bad(parsed.field, parsed.message);
  let position: bigint | null = null;
  if (m.position !== undefined && m.position !== null) {
    if (typeof m.position === 'bigint') position = m.position;
    else if (Number.isSafeInteger(m.position)) position = BigInt(m.position);
    else throw bad('message.position', 'must be an integer');
    if (position < -maxPosition - 1n || position > maxPosition)
      throw bad('message.position', 'must fit in a 64-bit signed integer');
  }
  if (m.headers !== undefined && (typeof m.headers !== 'object' || m.headers === null || Array.isArray(m.headers)))
    throw bad('message.headers', 'must be an object of strings');
  for (const [name, value] of Object.entries(m.headers ?? {}))
    storable(() =>
      assertStorableText(value, `message.headers[${JSON.stringify(name)}]`, textRules(limits, { allowBlank: true })),
    );
  return { id, type: m.type, payload: parsed.value, received: m.payload, position, headers: { ...(m.headers ?? {}) } };
}

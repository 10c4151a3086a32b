import { EngineError, thrownText } from '../errors/engine-error.ts';
import type { ProcessDefinition } from './define-process.ts';

/** Decodes an instance's stored data with its definition's schema, or says it no longer decodes. */
export function decodeState(
  def: ProcessDefinition,
  raw: unknown,
): { ok: true; data: unknown } | { ok: false; error: string } {
  const parsed = def.data.safeParse(raw);
  if (parsed.success) return { ok: true, data: parsed.data };
  const issue = parsed.error.issues[0];
  return { ok: false, error: `${(issue?.path ?? []).join('.') || 'state'}: ${issue?.message ?? 'invalid'}` };
}

/**
 * Refuses data a transition is about to store unless it decodes with the definition's schema as it
 * will be read back: after the JSON round trip the store applies (a Date becomes a string, undefined
 * is dropped). Stored, such data would make every later message fail with `state_undecodable`, and
 * nothing could repair the instance; refused, it is a failure of the message that produced it.
 */
export function checkStateToStore(def: ProcessDefinition, data: unknown, instance: string, to: string): void {
  let stored: unknown;
  try {
    stored = JSON.parse(JSON.stringify(data ?? null)) as unknown;
  } catch (err) {
    throw new EngineError(
      'state_invalid',
      `instance ${instance} of "${def.name}": the state for "${to}" cannot be stored as JSON (${thrownText(err)})`,
      { cause: err },
    );
  }
  const d = decodeState(def, stored);
  if (!d.ok)
    throw new EngineError(
      'state_invalid',
      `instance ${instance} of "${def.name}": the state for "${to}" fails the process's data schema (${d.error}); nothing was written`,
    );
}

export function decodeStateOrThrow(def: ProcessDefinition, raw: unknown, instanceId: string): unknown {
  const d = decodeState(def, raw);
  if (!d.ok)
    throw new EngineError(
      'state_undecodable',
      `instance ${instanceId} of "${def.name}": stored state no longer decodes (${d.error})`,
    );
  return d.data;
}

import { EngineError } from '../errors/engine-error.ts';
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

export function decodeStateOrThrow(def: ProcessDefinition, raw: unknown, instanceId: string): unknown {
  const d = decodeState(def, raw);
  if (!d.ok)
    throw new EngineError(
      'state_undecodable',
      `instance ${instanceId} of "${def.name}": stored state no longer decodes (${d.error})`,
    );
  return d.data;
}

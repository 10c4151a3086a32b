import { EngineError } from '../errors/engine-error.ts';
import { assertStorableJson } from '../input/assert-storable-json.ts';
import { assertStorableText } from '../input/assert-storable-text.ts';
import { defaultInputLimits, jsonRules, textRules, type InputLimits } from '../input/input-limits.ts';
import type { Decision } from './decide.ts';
import type { ProcessDefinition } from './define-process.ts';
import { checkStateToStore } from './decode-state.ts';

/**
 * Refuses, before anything is written, an applied decision the store cannot keep exactly as it was
 * made: its data (ADR 0012's check), and what it sends and arms. A command's type, destination,
 * payload and headers and a timeout's payload go through the guard of ADR 0013, so a NaN, a Date or
 * an `undefined` key is refused instead of being queued as `null`, a string or a missing key.
 *
 * A transition's `then` is the process's own code, as an action is a flow's: an unstorable decision
 * is that message's failure (`state_invalid`, recorded and quarantined past the budget like a
 * throwing transition), a failing timeout, a refused operator command (review 39).
 */
export function checkDecisionToStore(
  def: ProcessDefinition,
  decision: Decision & { kind: 'applied' },
  instance: string,
  limits: InputLimits = defaultInputLimits,
): void {
  checkStateToStore(def, decision.data, instance, decision.to);
  const refused = (err: unknown): never => {
    if (!(err instanceof EngineError) || err.code !== 'invalid_input') throw err;
    throw new EngineError(
      'state_invalid',
      `instance ${instance} of "${def.name}": the transition to "${decision.to}" cannot be stored as decided: ${err.message}; nothing was written`,
      { cause: err },
    );
  };
  const payloads = jsonRules(limits, 'message_payload_bytes');
  const text = textRules(limits);
  try {
    for (const [i, c] of decision.commands.entries()) {
      const at = `emit[${i}]`;
      if (typeof c !== 'object' || c === null)
        throw new EngineError('invalid_input', `${at}: must be an object`, { field: at });
      assertStorableText(c.type, `${at}.type`, text);
      assertStorableText(c.destination, `${at}.destination`, text);
      assertStorableJson(c.payload, `${at}.payload`, payloads);
      if (c.headers !== undefined) {
        if (typeof c.headers !== 'object' || c.headers === null || Array.isArray(c.headers))
          throw new EngineError('invalid_input', `${at}.headers: must be an object of strings`, {
            field: `${at}.headers`,
          });
        assertStorableJson(c.headers, `${at}.headers`, payloads);
        for (const [k, v] of Object.entries(c.headers))
          if (typeof v !== 'string')
            throw new EngineError('invalid_input', `${at}.headers.${k}: must be a string`, {
              field: `${at}.headers.${k}`,
            });
      }
    }
    for (const t of decision.timeouts) assertStorableJson(t.payload, `timeout "${t.name}" payload`, payloads);
  } catch (err) {
    refused(err);
  }
}

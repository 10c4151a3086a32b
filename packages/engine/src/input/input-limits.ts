import { engineConfigSchema, type EngineConfig } from '../runtime/engine-config.ts';
import { EngineError, toEngineError } from '../errors/engine-error.ts';
import { assertStorableJson, type JsonRules } from './assert-storable-json.ts';
import type { TextRules } from './assert-storable-text.ts';

/** The `limits` section of the engine config: what the engine accepts from its callers. */
export type InputLimits = EngineConfig['limits'];

type JsonLimit = 'flow_input_bytes' | 'signal_payload_bytes' | 'message_payload_bytes' | 'action_output_bytes';

/** The rules for one kind of JSON value, naming the setting that bounds it. */
export function jsonRules(limits: InputLimits, limit: JsonLimit): JsonRules {
  return { maxBytes: limits[limit], maxDepth: limits.json_depth, setting: `limits.${limit}` };
}

/**
 * The rules for a value the flow's code hands the engine to store that no byte limit of its own bounds
 * (ADR 0125): an action's input, a compensation's input, the flow's own output. Refused where JSON
 * cannot hold it exactly, as an action's output is, never converted; nested no deeper than
 * `limits.json_depth`; its size unbounded, as it was.
 */
export function valueRules(limits: InputLimits): JsonRules {
  return { maxBytes: Number.MAX_SAFE_INTEGER, maxDepth: limits.json_depth, setting: 'none' };
}

/**
 * `value` checked by {@link assertStorableJson} under {@link valueRules} as `field`, or the refusal as
 * an `invalid_input` EngineError whose message begins with `where` (the step it belongs to); never throws.
 */
export function refusedValue(limits: InputLimits, value: unknown, field: string, where: string): EngineError | null {
  try {
    assertStorableJson(value, field, valueRules(limits));
    return null;
  } catch (err) {
    const refused = toEngineError(err, 'invalid_input');
    return new EngineError('invalid_input', `${where}: ${refused.message}`, {
      ...(refused.field === null ? {} : { field: refused.field }),
    });
  }
}

/** The rules for a text field (ids, keys, names, reasons). */
export function textRules(limits: InputLimits, opts: { allowBlank?: boolean } = {}): TextRules {
  return { maxLength: limits.text_length, ...opts };
}

/** The limits when none are configured (the defaults of engine-config.ts). */
export const defaultInputLimits: InputLimits = engineConfigSchema.shape.limits.parse({});

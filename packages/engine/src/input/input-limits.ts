import { engineConfigSchema, type EngineConfig } from '../runtime/engine-config.ts';
import type { JsonRules } from './assert-storable-json.ts';
import type { TextRules } from './assert-storable-text.ts';

/** The `limits` section of the engine config: what the engine accepts from its callers. */
export type InputLimits = EngineConfig['limits'];

type JsonLimit = 'flow_input_bytes' | 'signal_payload_bytes' | 'message_payload_bytes' | 'action_output_bytes';

/** The rules for one kind of JSON value, naming the setting that bounds it. */
export function jsonRules(limits: InputLimits, limit: JsonLimit): JsonRules {
  return { maxBytes: limits[limit], maxDepth: limits.json_depth, setting: `limits.${limit}` };
}

/** The rules for a text field (ids, keys, names, reasons). */
export function textRules(limits: InputLimits, opts: { allowBlank?: boolean } = {}): TextRules {
  return { maxLength: limits.text_length, ...opts };
}

/** The limits when none are configured (the defaults of engine-config.ts). */
export const defaultInputLimits: InputLimits = engineConfigSchema.shape.limits.parse({});

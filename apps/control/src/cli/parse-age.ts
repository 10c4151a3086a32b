import { usageError } from './parse-cli-args.ts';

const units: Record<string, number> = { s: 1, m: 60, h: 3600, d: 86_400 };
const tenYears = 10 * 365 * 86_400;

/**
 * An age on the command line, `30d`, `12h`, `90m`, `3600s` or bare seconds, as whole seconds
 * (1 s to 10 years); undefined when absent. A bad one is a usage error naming the option.
 */
export function ageOption(name: string, value: string | undefined): number | undefined {
  if (value === undefined) return undefined;
  const match = /^(\d+)([smhd]?)$/.exec(value.trim());
  const seconds = match ? Number(match[1]) * (units[match[2] || 's'] ?? 1) : NaN;
  if (!Number.isSafeInteger(seconds) || seconds < 1 || seconds > tenYears)
    throw usageError(`--${name} must be an age such as 30d, 12h, 90m or 3600s (1 s to 10 years), got "${value}"`);
  return seconds;
}

import type { z } from 'zod';

/**
 * The field a zod issue refuses, as a dotted path (`expected.runStatus`, `gatedCommands.0`), or
 * `whole` for the value itself. An unknown key is named itself, so a typo such as `expectd` is
 * refused by its own name rather than passing unnoticed.
 */
export function zodIssueField(issue: z.core.$ZodIssue | undefined, whole: string): string {
  const path = (issue?.path ?? []).map(String);
  if (issue?.code === 'unrecognized_keys' && issue.keys[0] !== undefined) path.push(issue.keys[0]);
  return path.join('.') || whole;
}

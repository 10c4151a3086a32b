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

/**
 * For a value that matched no branch of a union, the first issue of the branch it came closest to
 * (the fewest issues; the first such branch), its path prefixed with the union's own: a target with
 * `stepSequence: 0` is refused as `target.stepSequence`, not as "target: Invalid input". Any other
 * issue is returned as it is.
 */
export function closestIssue(issue: z.core.$ZodIssue | undefined): z.core.$ZodIssue | undefined {
  if (issue?.code !== 'invalid_union' || issue.errors.length === 0) return issue;
  const branch = issue.errors.reduce((best, b) => (b.length < best.length ? b : best));
  const inner = branch[0];
  return inner ? closestIssue({ ...inner, path: [...issue.path, ...inner.path] }) : issue;
}

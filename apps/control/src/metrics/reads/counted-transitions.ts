/**
 * The history rows the transitions counter and the overview's chart count: applied messages and
 * operator repairs, not ignored or skipped messages, and not a release's audit row, which stays at
 * the state it found (a quarantine lifted moves no state; a release by retry has its message's own
 * applied row for its move). A repair row with no detail is counted. Word for word the predicate of
 * `process_transitions_counted_at_idx` (migration 0028), so both reads stay index-only.
 */
export const countedTransition = (alias: string): string =>
  `(${alias}.outcome = 'applied' or (${alias}.outcome = 'repair' and (${alias}.detail ? 'release') is not true))`;

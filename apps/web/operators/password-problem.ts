/** What a password pair typed into a form lacks, naming the field, or null when it may be sent. */
export interface FieldProblem {
  /** The input's `name`, so the form marks that field invalid. */
  field: string;
  message: string;
}

/** The API's rule for a new password (operators.create, operators.resetPassword, auth.changePassword). */
export const minPasswordLength = 12;

/**
 * Checks a new password and its repetition before anything is sent: too short, then different.
 * `labels` are the fields' visible labels, so the message names the field the operator sees.
 */
export function passwordProblem(
  password: string,
  repeated: string,
  labels: { password: string; repeated: string },
): FieldProblem | null {
  if (password.length < minPasswordLength)
    return { field: 'password', message: `${labels.password}: at least ${minPasswordLength} characters.` };
  if (password !== repeated)
    return { field: 'repeated', message: `${labels.repeated}: it differs from the ${labels.password.toLowerCase()}.` };
  return null;
}

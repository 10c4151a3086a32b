import type { FieldProblem } from './password-problem';
import { minPasswordLength } from './password-problem';

/** A new password typed twice, with the field the form's check refused marked invalid and described by the error. */
export function PasswordPairFields({
  labels,
  password,
  repeated,
  onPassword,
  onRepeated,
  problem,
  errorId,
  autoFocus = false,
}: {
  labels: { password: string; repeated: string };
  password: string;
  repeated: string;
  onPassword: (v: string) => void;
  onRepeated: (v: string) => void;
  problem: FieldProblem | null;
  errorId: string;
  /** Focus the first field when the form opens (an action opened from a row's button). */
  autoFocus?: boolean;
}) {
  const ruleId = `${errorId}-rule`;
  return (
    <>
      <label>
        {labels.password}
        <input
          name="password"
          type="password"
          autoComplete="new-password"
          autoFocus={autoFocus}
          value={password}
          aria-invalid={problem?.field === 'password' ? true : undefined}
          aria-describedby={problem?.field === 'password' ? `${ruleId} ${errorId}` : ruleId}
          onChange={(e) => onPassword(e.target.value)}
        />
      </label>
      <p id={ruleId} className="muted">
        At least {minPasswordLength} characters.
      </p>
      <label>
        {labels.repeated}
        <input
          name="repeated"
          type="password"
          autoComplete="new-password"
          value={repeated}
          aria-invalid={problem?.field === 'repeated' ? true : undefined}
          aria-describedby={problem?.field === 'repeated' ? errorId : undefined}
          onChange={(e) => onRepeated(e.target.value)}
        />
      </label>
    </>
  );
}

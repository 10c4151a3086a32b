/** Why a form's change was not made: the form's own check, or the API's answer in its words. */
export function FormError({ id, text }: { id: string; text: string | null }) {
  if (text === null) return null;
  return (
    <p id={id} className="notice notice-bad" role="alert" data-testid="operator-form-error">
      {text}
    </p>
  );
}

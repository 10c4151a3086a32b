const meanings: Record<string, string> = {
  action: 'An action: side-effecting work, retried by its policy',
  value: 'A recorded value (ctx.now(), random(), uuid()), replayed as recorded',
  signal: 'Waits for a signal sent to this run',
  timer: 'Waits until a time (ctx.sleep)',
  child: 'Starts a child run and waits for it to finish',
  cancel: 'Where this run took a cancellation request',
};

/** The step's kind as a small word (colour-independent), explained in its tooltip. */
export function StepKindLabel({ kind }: { kind: string }) {
  return (
    <span className={`kind kind-${kind in meanings ? kind : 'other'}`} title={meanings[kind] ?? kind}>
      {kind}
    </span>
  );
}

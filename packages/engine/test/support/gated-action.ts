import { defineAction } from '../../src/index.ts';

/**
 * An action whose every call counts its entry under its input's `tag` and then waits until the test
 * opens that tag's gate: a test drives a step by progress (it is running; now let it finish) and sees
 * whether it ran twice. `gate(tag)` must be made before the step runs; `openAll()` lets every step go
 * (for `afterAll`).
 */
export function gatedAction(name: string) {
  const entries = new Map<string, number>();
  const gates = new Map<string, Promise<void>>();
  const opens: (() => void)[] = [];
  const gate = (tag: string) => {
    let open!: () => void;
    gates.set(tag, new Promise<void>((res) => (open = res)));
    opens.push(open);
    return open;
  };
  const action = defineAction({
    name,
    run: async (input: { tag: string }) => {
      entries.set(input.tag, (entries.get(input.tag) ?? 0) + 1);
      await gates.get(input.tag);
      return input.tag;
    },
  });
  return { action, entries, gate, openAll: () => opens.forEach((o) => o()) };
}

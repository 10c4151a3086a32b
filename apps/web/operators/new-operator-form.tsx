'use client';

import { useMutation, useQueryClient } from '@tanstack/react-query';
import { useState, type FormEvent } from 'react';
import type { ConsoleRole } from '@/auth/use-session';
import { apiErrorInfo } from '@/trpc/api-error';
import { useTRPC } from '@/trpc/trpc-context';
import { useSendOnce } from '@/ui/use-send-once';
import { consoleRoles, roleSummary } from './console-roles';
import { FormError } from './form-error';
import { PasswordPairFields } from './password-pair-fields';
import { passwordProblem, type FieldProblem } from './password-problem';

const labels = { password: 'Password', repeated: 'Repeat the password' };
const errorId = 'new-operator-error';

/** What the form checks before sending: both names given, then the password pair. */
function newOperatorProblem(f: { name: string; displayName: string; password: string; repeated: string }) {
  if (f.name.trim() === '') return { field: 'name', message: 'Name: required (the name they sign in with).' };
  if (f.displayName.trim() === '') return { field: 'displayName', message: 'Display name: required.' };
  return passwordProblem(f.password, f.repeated, labels);
}

/** An admin creates an operator account (operators.create); it can sign in at once. */
export function NewOperatorForm() {
  const trpc = useTRPC();
  const queryClient = useQueryClient();
  const once = useSendOnce();
  const [name, setName] = useState('');
  const [displayName, setDisplayName] = useState('');
  const [role, setRole] = useState<ConsoleRole>('viewer');
  const [password, setPassword] = useState('');
  const [repeated, setRepeated] = useState('');
  const [problem, setProblem] = useState<FieldProblem | null>(null);
  const [created, setCreated] = useState<string | null>(null);
  const create = useMutation(
    trpc.operators.create.mutationOptions({
      onSuccess: (_r, input) => {
        setCreated(`Created ${input.name.trim().toLowerCase()} as ${input.role}; they can sign in now.`);
        setName('');
        setDisplayName('');
        setRole('viewer');
        setPassword('');
        setRepeated('');
      },
      onSettled: async () => {
        once.done();
        await queryClient.invalidateQueries(trpc.operators.list.pathFilter());
      },
    }),
  );
  const onSubmit = (e: FormEvent) => {
    e.preventDefault();
    const found = newOperatorProblem({ name, displayName, password, repeated });
    setProblem(found);
    setCreated(null);
    if (found) {
      create.reset();
      return;
    }
    if (once.start()) create.mutate({ name: name.trim(), displayName: displayName.trim(), role, password });
  };
  const invalid = (field: string) =>
    problem?.field === field ? { 'aria-invalid': true, 'aria-describedby': errorId } : {};
  return (
    <section className="panel" aria-labelledby="new-operator-title" data-testid="new-operator">
      <h2 id="new-operator-title">New operator</h2>
      <form className="operator-form" noValidate onSubmit={onSubmit} aria-labelledby="new-operator-title">
        <label>
          Name
          <input
            name="name"
            autoComplete="off"
            spellCheck={false}
            value={name}
            onChange={(e) => setName(e.target.value)}
            {...invalid('name')}
          />
        </label>
        <label>
          Display name
          <input
            name="displayName"
            autoComplete="off"
            value={displayName}
            onChange={(e) => setDisplayName(e.target.value)}
            {...invalid('displayName')}
          />
        </label>
        <label>
          Role
          <select name="role" value={role} onChange={(e) => setRole(e.target.value as ConsoleRole)}>
            {consoleRoles.map((r) => (
              <option key={r} value={r}>
                {roleSummary[r]}
              </option>
            ))}
          </select>
        </label>
        <PasswordPairFields
          labels={labels}
          password={password}
          repeated={repeated}
          onPassword={setPassword}
          onRepeated={setRepeated}
          problem={problem}
          errorId={errorId}
        />
        <FormError
          id={errorId}
          text={problem?.message ?? (create.isError ? `Not created: ${apiErrorInfo(create.error).message}` : null)}
        />
        {created ? (
          <p className="notice notice-ok" role="status" data-testid="new-operator-done">
            {created}
          </p>
        ) : null}
        <p className="actions">
          <button type="submit" className="primary" disabled={create.isPending}>
            {create.isPending ? 'Creating…' : 'Create operator'}
          </button>
        </p>
      </form>
    </section>
  );
}

'use client';

import { useQueryClient } from '@tanstack/react-query';
import Link from 'next/link';
import { Fragment, useRef, useState } from 'react';
import type { OperatorRow } from '@/trpc/api-types';
import { useTRPC } from '@/trpc/trpc-context';
import { Timestamp } from '@/ui/timestamp';
import { ChangeRoleForm } from './change-role-form';
import { ResetPasswordForm } from './reset-password-form';
import { SetDisabledForm } from './set-disabled-form';

type Action = 'role' | 'disabled' | 'password';
const actionForms = { role: ChangeRoleForm, disabled: SetDisabledForm, password: ResetPasswordForm } as const;

/**
 * Every operator, with each other operator's actions (one open at a time, in a row under its
 * operator). The signed-in admin's own row offers none: an admin cannot change itself, and changes
 * its own password on the Account page.
 */
export function OperatorsTable({
  operators,
  meId,
  now,
  onOutcome,
}: {
  operators: OperatorRow[];
  meId: string;
  now: number;
  onOutcome: (text: string | null) => void;
}) {
  const trpc = useTRPC();
  const queryClient = useQueryClient();
  const [open, setOpen] = useState<{ id: string; action: Action } | null>(null);
  const toggle = (id: string, action: Action) => {
    onOutcome(null);
    setOpen((o) => (o?.id === id && o.action === action ? null : { id, action }));
  };
  // Each row's action buttons, so a cancelled form gives the focus back to the one that opened it
  // (review 44): the Cancel button that had it goes with the form.
  const openers = useRef(new Map<string, HTMLButtonElement>());
  const cancel = (id: string, action: Action) => {
    openers.current.get(`${id}:${action}`)?.focus();
    setOpen(null);
  };
  const done = (text: string) => {
    setOpen(null);
    onOutcome(text);
    void queryClient.invalidateQueries(trpc.operators.list.pathFilter());
  };
  return (
    <div className="table-scroll">
      <table className="table" data-testid="operators-table">
        <caption className="muted">Operators, by name</caption>
        <thead>
          <tr>
            <th scope="col">Name</th>
            <th scope="col">Display name</th>
            <th scope="col">Role</th>
            <th scope="col">Created</th>
            <th scope="col">Disabled</th>
            <th scope="col">Actions</th>
          </tr>
        </thead>
        <tbody>
          {operators.map((o) => {
            const mine = o.id === meId;
            const openAction = open?.id === o.id ? open.action : null;
            const Form = openAction === null ? null : actionForms[openAction];
            const panelId = `operator-action-${o.id}`;
            const button = (action: Action, label: string) => (
              <button
                type="button"
                ref={(el) => {
                  if (el) openers.current.set(`${o.id}:${action}`, el);
                  else openers.current.delete(`${o.id}:${action}`);
                }}
                aria-expanded={open?.id === o.id && open.action === action}
                aria-controls={open?.id === o.id && open.action === action ? panelId : undefined}
                onClick={() => toggle(o.id, action)}
                aria-label={`${label} ${o.name}`}
              >
                {label}…
              </button>
            );
            return (
              <Fragment key={o.id}>
                <tr data-testid="operator-row" data-name={o.name}>
                  <th scope="row" className="mono operator-name">
                    {o.name}
                  </th>
                  <td>{o.displayName}</td>
                  <td>
                    <span className="badge" data-testid="operator-role">
                      {o.role}
                    </span>
                  </td>
                  <td>
                    <Timestamp iso={o.createdAt} now={now} />
                  </td>
                  <td data-testid="operator-disabled">
                    {o.disabled ? <span className="badge badge-bad">disabled</span> : 'no'}
                  </td>
                  <td>
                    {mine ? (
                      <span className="operator-actions" data-testid="operator-you">
                        <span className="badge badge-small badge-active">you</span>
                        <Link href="/account">Change your password on the Account page</Link>
                      </span>
                    ) : (
                      <span className="operator-actions">
                        {button('role', 'Change role')}
                        {button('disabled', o.disabled ? 'Enable' : 'Disable')}
                        {button('password', 'Reset password')}
                      </span>
                    )}
                  </td>
                </tr>
                {Form && openAction !== null && !mine ? (
                  <tr className="operator-action-row" id={panelId} data-testid="operator-action">
                    <td colSpan={6}>
                      <Form operator={o} onDone={done} onCancel={() => cancel(o.id, openAction)} />
                    </td>
                  </tr>
                ) : null}
              </Fragment>
            );
          })}
        </tbody>
      </table>
    </div>
  );
}

import { defineAction, defineFlow, NonRetryableError } from '@sagaflow/engine';
import type { AccountDirectory } from './account-directory.ts';

export type SignupInput = {
  email: string;
  name: string;
  /** How long the signup waits for `verified` before it is undone. Recorded with the run. */
  verifyWithinSeconds: number;
};

export type SignupOutput = { status: 'active'; accountId: string; welcomeEmailId: string } | { status: 'expired' };

/**
 * The signup saga and its actions, bound to the directory they act on. Actions are looked up by
 * name when a worker runs them, so every process that runs workers must register the same ones.
 *
 * create account ─▶ wait for `verified` ─▶ send welcome email
 *       ▲ undone by delete-account when the wait expires or a later step fails for good
 */
export function defineSignupSaga(accounts: AccountDirectory) {
  const createAccount = defineAction({
    name: 'signup.create-account',
    retry: { maxAttempts: 3, backoff: { initialMs: 200 } },
    run: async (input: { email: string; name: string }) => ({ accountId: accounts.createAccount(input).id }),
  });

  const deleteAccount = defineAction({
    name: 'signup.delete-account',
    retry: { maxAttempts: 5, backoff: { initialMs: 200 } },
    run: async (input: { accountId: string }) => ({ deleted: accounts.deleteAccount(input.accountId) }),
  });

  const sendWelcomeEmail = defineAction({
    name: 'signup.send-welcome-email',
    retry: { maxAttempts: 5, backoff: { initialMs: 500 } },
    run: async (input: { accountId: string }) => {
      const account = accounts.findAccount(input.accountId);
      // Retrying cannot bring a deleted account back: fail the step at once.
      if (!account) throw new NonRetryableError(`account ${input.accountId} no longer exists`);
      return { emailId: accounts.sendWelcomeEmail(account).id };
    },
  });

  const signupFlow = defineFlow({
    name: 'signup',
    version: 1,
    run: async (ctx, input: SignupInput): Promise<SignupOutput> => {
      const { accountId } = await ctx
        .action(createAccount, { email: input.email, name: input.name })
        .compensateWith(deleteAccount, (o) => ({ accountId: o.accountId }));
      try {
        if ((await ctx.awaitSignal('verified', { timeoutSeconds: input.verifyWithinSeconds })) === null) {
          await ctx.compensate();
          return { status: 'expired' };
        }
        const { emailId } = await ctx.action(sendWelcomeEmail, { accountId });
        return { status: 'active', accountId, welcomeEmailId: emailId };
      } catch (err) {
        await ctx.compensate();
        throw err;
      }
    },
  });

  return { signupFlow, actions: [createAccount, deleteAccount, sendWelcomeEmail] };
}

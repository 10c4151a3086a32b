import { randomUUID } from 'node:crypto';

export interface Account {
  id: string;
  email: string;
  name: string;
  createdAt: Date;
}

export interface SentEmail {
  id: string;
  to: string;
  subject: string;
}

/**
 * The service's own state, which the saga's actions change. It stands in for your tables and your
 * mail provider: kept in memory so the example stays small. Every operation is idempotent on a
 * business key (the email address, the account id), because the engine delivers at least once.
 */
export interface AccountDirectory {
  /** Creates the account for `email`, or returns the one that exists. */
  createAccount(input: { email: string; name: string }): Account;
  /** Deletes the account; deleting one that is gone is not an error. */
  deleteAccount(accountId: string): boolean;
  findAccount(accountId: string): Account | undefined;
  /** Sends the welcome email once per account. */
  sendWelcomeEmail(account: { id: string; email: string }): SentEmail;
  readonly sentEmails: readonly SentEmail[];
}

export function createAccountDirectory(): AccountDirectory {
  const accounts = new Map<string, Account>();
  const welcomes = new Map<string, SentEmail>();
  const sentEmails: SentEmail[] = [];
  return {
    createAccount({ email, name }) {
      const existing = [...accounts.values()].find((a) => a.email === email);
      if (existing) return existing;
      const account = { id: randomUUID(), email, name, createdAt: new Date() };
      accounts.set(account.id, account);
      return account;
    },
    deleteAccount: (accountId) => accounts.delete(accountId),
    findAccount: (accountId) => accounts.get(accountId),
    sendWelcomeEmail({ id, email }) {
      const sent = welcomes.get(id);
      if (sent) return sent;
      const mail = { id: randomUUID(), to: email, subject: 'Welcome aboard' };
      welcomes.set(id, mail);
      sentEmails.push(mail);
      return mail;
    },
    sentEmails,
  };
}

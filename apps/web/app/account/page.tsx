import type { Metadata } from 'next';
import { ChangePasswordForm } from '@/auth/change-password-form';

export const metadata: Metadata = { title: 'Account' };

/** The signed-in operator's own account: its password (ADR 0111). */
export default function AccountPage() {
  return <ChangePasswordForm />;
}

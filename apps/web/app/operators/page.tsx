import type { Metadata } from 'next';
import { OperatorsPage } from '@/operators/operators-page';

export const metadata: Metadata = { title: 'Operators' };

/** Operator accounts and their roles, managed by an admin (ADR 0114). */
export default function Page() {
  return <OperatorsPage />;
}

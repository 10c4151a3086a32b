import type { Metadata } from 'next';
import { DefinitionsView } from '@/definitions/definitions-view';

export const metadata: Metadata = { title: 'Definitions' };

export default function DefinitionsPage() {
  return <DefinitionsView />;
}

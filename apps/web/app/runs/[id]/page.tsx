import type { Metadata } from 'next';
import { RunDetailView } from '@/runs/run-detail';

type Props = { params: Promise<{ id: string }> };

export async function generateMetadata({ params }: Props): Promise<Metadata> {
  const { id } = await params;
  return { title: `Run ${id.slice(0, 8)}` };
}

export default async function RunPage({ params }: Props) {
  const { id } = await params;
  return <RunDetailView id={id} />;
}

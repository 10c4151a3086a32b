import type { Metadata } from 'next';
import { DemoPage } from '@/runs/demo-page';

export const metadata: Metadata = { title: 'Demo' };

export default function Demo() {
  return <DemoPage />;
}

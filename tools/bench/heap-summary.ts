/** Summarises a V8 sampling heap profile (.heapprofile): bytes allocated by area and by function, per record when given. */
import * as fs from 'fs';
import { areaOf, bundleLineMap } from './profile-summary';

/** One node of a sampling heap profile's call tree. */
interface HeapNode {
  callFrame: { functionName: string; url: string; lineNumber: number };
  selfSize: number;
  children?: HeapNode[];
}

/** One row: bytes allocated and share of all sampled allocation. */
export interface HeapRow {
  name: string;
  bytes: number;
  share: number;
}

/** Sampled bytes by function and by area (package, adjunct module, node internals). */
export function summariseHeapProfile(
  head: HeapNode,
  lineToFile?: (url: string, line: number) => string | undefined,
): { totalBytes: number; functions: HeapRow[]; areas: HeapRow[] } {
  const fns = new Map<string, number>();
  const areas = new Map<string, number>();
  let total = 0;
  const stack: HeapNode[] = [head];
  while (stack.length) {
    const n = stack.pop()!;
    if (n.children) stack.push(...n.children);
    if (!n.selfSize) continue;
    total += n.selfSize;
    const { functionName, url, lineNumber } = n.callFrame;
    const file = lineToFile?.(url, lineNumber);
    const where = file ?? (url ? `${url.replace(/^.*?\/(node_modules|src)\//, '$1/')}:${lineNumber + 1}` : '');
    const name = `${functionName || '(anonymous)'}${where ? ` ${where}` : ''}`;
    fns.set(name, (fns.get(name) ?? 0) + n.selfSize);
    const area = areaOf(url, functionName, file);
    areas.set(area, (areas.get(area) ?? 0) + n.selfSize);
  }
  const rows = (m: Map<string, number>) =>
    [...m].sort((a, b) => b[1] - a[1]).map(([name, bytes]) => ({ name, bytes, share: total ? bytes / total : 0 }));
  return { totalBytes: total, functions: rows(fns), areas: rows(areas) };
}

if (require.main === module) {
  const [file, bundle, recordsArg] = process.argv.slice(2);
  if (!file) {
    process.stderr.write('usage: tsx tools/bench/heap-summary.ts <file.heapprofile> [bench/.build/worker-child.js] [records]\n');
    process.exit(2);
  }
  const profile = JSON.parse(fs.readFileSync(file, 'utf8')) as { head: HeapNode };
  let lineToFile: ((url: string, line: number) => string | undefined) | undefined;
  if (bundle && fs.existsSync(bundle)) {
    const map = bundleLineMap(fs.readFileSync(bundle, 'utf8'));
    lineToFile = (url, line) => (url.endsWith('worker-child.js') ? map(line) : undefined);
  }
  const s = summariseHeapProfile(profile.head, lineToFile);
  const records = Number(recordsArg) || 0;
  const per = (b: number) => (records ? `${(b / records).toFixed(0)} B/record` : `${(b / 2 ** 20).toFixed(1)} MB`);
  const fmt = (r: HeapRow) => `| ${r.name.replace(/\|/g, '\\|')} | ${per(r.bytes)} | ${(r.share * 100).toFixed(1)}% |`;
  process.stdout.write(
    [
      `Sampled allocations: ${per(s.totalBytes)} (collected objects included).`,
      '',
      '| area | allocated | share |',
      '|---|---:|---:|',
      ...s.areas.slice(0, 12).map(fmt),
      '',
      '| function | allocated | share |',
      '|---|---:|---:|',
      ...s.functions.slice(0, 25).map(fmt),
    ].join('\n') + '\n',
  );
}

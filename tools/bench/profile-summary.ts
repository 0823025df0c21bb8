/** Summarises a V8 .cpuprofile: self time by function and by area (package, adjunct module, GC, idle). */
import * as fs from 'fs';

/** The parts of a V8 CPU profile this summary reads. */
export interface CpuProfile {
  nodes: { id: number; callFrame: { functionName: string; url: string; lineNumber: number }; hitCount?: number }[];
  samples: number[];
  timeDeltas: number[];
  startTime: number;
  endTime: number;
}

/** One row of the summary: self time in ms and share of all sampled time. */
export interface ProfileRow {
  name: string;
  selfMs: number;
  share: number;
}

/** Self time by function and by area, plus the total sampled time. */
export interface ProfileSummary {
  totalMs: number;
  functions: ProfileRow[];
  areas: ProfileRow[];
}

/** Maps line numbers of an esbuild bundle to source files using esbuild's `// src/x.ts` module comments. */
export function bundleLineMap(bundleText: string): (line: number) => string | undefined {
  const marks: { line: number; file: string }[] = [];
  bundleText.split('\n').forEach((l, i) => {
    const m = /^\/\/ ((?:src|node_modules)\/\S+\.[cm]?[jt]s)$/.exec(l);
    if (m) marks.push({ line: i, file: m[1] });
  });
  return (line) => {
    let lo = 0;
    let hi = marks.length - 1;
    let best: string | undefined;
    while (lo <= hi) {
      const mid = (lo + hi) >> 1;
      if (marks[mid].line <= line) {
        best = marks[mid].file;
        lo = mid + 1;
      } else hi = mid - 1;
    }
    return best;
  };
}

/** Area of a frame: (idle)/(garbage collector)/(program), node:internals, a node_modules package, or src/<dir>. */
export function areaOf(url: string, functionName: string, file?: string): string {
  if (!url) return functionName.startsWith('(') ? functionName : '(native)';
  const src = file ?? url;
  const nm = /node_modules\/((?:@[^/]+\/)?[^/]+)/.exec(src);
  if (nm) return nm[1];
  if (src.startsWith('node:')) return 'node internals';
  const s = /(?:^|\/)src\/([^/]+)\//.exec(src);
  if (s) return `adjunct src/${s[1]}`;
  return src
    .replace(/^file:\/\//, '')
    .split('/')
    .slice(-1)[0];
}

/** Computes self time per function and per area; `top` rows of functions. */
export function summariseProfile(
  p: CpuProfile,
  options: { top?: number; lineToFile?: (url: string, line: number) => string | undefined } = {},
): ProfileSummary {
  const byId = new Map(p.nodes.map((n) => [n.id, n]));
  const selfUs = new Map<number, number>();
  for (let i = 0; i < p.samples.length; i++) {
    const dt = p.timeDeltas[i + 1] ?? 0;
    selfUs.set(p.samples[i], (selfUs.get(p.samples[i]) ?? 0) + Math.max(0, dt));
  }
  let total = 0;
  const fns = new Map<string, number>();
  const areas = new Map<string, number>();
  for (const [id, us] of selfUs) {
    const n = byId.get(id);
    if (!n) continue;
    total += us;
    const { functionName, url, lineNumber } = n.callFrame;
    const file = options.lineToFile?.(url, lineNumber);
    const where = file ?? (url ? url.replace(/^file:\/\//, '').replace(/^.*?\/(node_modules|src)\//, '$1/') : '');
    const name = `${functionName || '(anonymous)'}${where ? ` ${where}${file ? '' : `:${lineNumber + 1}`}` : ''}`;
    fns.set(name, (fns.get(name) ?? 0) + us);
    const area = areaOf(url, functionName, file);
    areas.set(area, (areas.get(area) ?? 0) + us);
  }
  const rows = (m: Map<string, number>, top: number) =>
    [...m]
      .sort((a, b) => b[1] - a[1])
      .slice(0, top)
      .map(([name, us]) => ({ name, selfMs: us / 1000, share: total ? us / total : 0 }));
  return { totalMs: total / 1000, functions: rows(fns, options.top ?? 25), areas: rows(areas, 30) };
}

/** Reads a .cpuprofile (and maps bundle lines to src files when the bundle is given) and summarises it. */
export function summariseProfileFile(file: string, bundleFile?: string, top = 25): ProfileSummary {
  const p = JSON.parse(fs.readFileSync(file, 'utf8')) as CpuProfile;
  let lineToFile: ((url: string, line: number) => string | undefined) | undefined;
  if (bundleFile && fs.existsSync(bundleFile)) {
    const map = bundleLineMap(fs.readFileSync(bundleFile, 'utf8'));
    lineToFile = (url, line) => (url.endsWith(bundleFile) || url.endsWith('worker-child.js') ? map(line) : undefined);
  }
  return summariseProfile(p, { top, lineToFile });
}

/** Markdown tables of a summary. */
export function profileMarkdown(s: ProfileSummary, top = 20): string {
  const fmt = (r: ProfileRow) => `| ${r.name.replace(/\|/g, '\\|')} | ${r.selfMs.toFixed(0)} | ${(r.share * 100).toFixed(1)}% |`;
  return [
    `Sampled ${(s.totalMs / 1000).toFixed(1)} s of worker CPU-profile time (self time).`,
    '',
    '| area | self ms | share |',
    '|---|---:|---:|',
    ...s.areas.slice(0, 15).map(fmt),
    '',
    '| function | self ms | share |',
    '|---|---:|---:|',
    ...s.functions.slice(0, top).map(fmt),
  ].join('\n');
}

if (require.main === module) {
  const [file, bundle] = process.argv.slice(2);
  if (!file) {
    process.stderr.write('usage: tsx tools/bench/profile-summary.ts <file.cpuprofile> [bench/.build/worker-child.js]\n');
    process.exit(2);
  }
  process.stdout.write(profileMarkdown(summariseProfileFile(file, bundle)) + '\n');
}

import { areaOf, bundleLineMap, summariseProfile, CpuProfile } from '../../../tools/bench/profile-summary';

describe('bench profile summary', () => {
  const profile: CpuProfile = {
    nodes: [
      { id: 1, callFrame: { functionName: '(root)', url: '', lineNumber: -1 } },
      { id: 2, callFrame: { functionName: 'encode', url: 'file:///r/node_modules/cassandra-driver/lib/encoder.js', lineNumber: 9 } },
      { id: 3, callFrame: { functionName: 'eachBatch', url: 'file:///r/bench/.build/worker-child.js', lineNumber: 12 } },
      { id: 4, callFrame: { functionName: '(garbage collector)', url: '', lineNumber: -1 } },
    ],
    samples: [2, 2, 3, 4, 2],
    timeDeltas: [0, 1000, 1000, 1000, 1000],
    startTime: 0,
    endTime: 5000,
  };

  it('attributes self time to functions and areas, mapping bundle lines to src files', () => {
    const map = bundleLineMap(['// src/errors/x.ts', 'a', '// src/sink/pipeline-task.ts', ...Array(20).fill('x')].join('\n'));
    expect(map(0)).toBe('src/errors/x.ts');
    expect(map(12)).toBe('src/sink/pipeline-task.ts');
    const s = summariseProfile(profile, { lineToFile: (url, line) => (url.endsWith('worker-child.js') ? map(line) : undefined) });
    expect(s.totalMs).toBeCloseTo(4);
    expect(s.functions[0].name).toBe('encode node_modules/cassandra-driver/lib/encoder.js:10');
    expect(s.functions[0].selfMs).toBeCloseTo(2);
    expect(s.areas.map((a) => a.name)).toEqual(['cassandra-driver', 'adjunct src/sink', '(garbage collector)']);
    expect(s.areas[0].share).toBeCloseTo(0.5);
  });

  it('names areas', () => {
    expect(areaOf('node:internal/streams', 'x')).toBe('node internals');
    expect(areaOf('file:///a/node_modules/@scope/pkg/i.js', 'x')).toBe('@scope/pkg');
    expect(areaOf('', '(idle)')).toBe('(idle)');
    expect(areaOf('file:///r/src/store/cassandra/a.ts', 'f')).toBe('adjunct src/store');
  });
});

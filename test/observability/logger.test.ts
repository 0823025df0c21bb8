import { buildProgram } from '../../src/cli/main';
import { createLogger, resolveLogLevel } from '../../src/observability/logger';

/** Keys of one JSON text object in the order written, duplicates included (JSON.parse would hide them). */
function topLevelKeys(line: string): string[] {
  const keys: string[] = [];
  let depth = 0;
  const re = /"((?:[^"\\]|\\.)*)"\s*(:)?|[{}[\]]/g;
  for (let m = re.exec(line); m; m = re.exec(line)) {
    if (m[0] === '{' || m[0] === '[') depth++;
    else if (m[0] === '}' || m[0] === ']') depth--;
    else if (m[2] && depth === 1) keys.push(m[1]);
  }
  return keys;
}

function capture(level?: string) {
  const lines: string[] = [];
  return { lines, logger: createLogger(level, { write: (l: string) => void lines.push(l) }) };
}

describe('logger', () => {
  const saved = process.env.ADJUNCT_LOG_LEVEL;
  afterEach(() => {
    if (saved === undefined) delete process.env.ADJUNCT_LOG_LEVEL;
    else process.env.ADJUNCT_LOG_LEVEL = saved;
  });

  it('ADJUNCT_LOG_LEVEL overrides the config level; the config level applies without it; info by default', () => {
    delete process.env.ADJUNCT_LOG_LEVEL;
    expect(resolveLogLevel()).toBe('info');
    expect(resolveLogLevel('warn')).toBe('warn');
    process.env.ADJUNCT_LOG_LEVEL = 'debug';
    expect(resolveLogLevel('warn')).toBe('debug');
    const { lines, logger } = capture('warn');
    logger.debug('seen at debug');
    expect(lines).toHaveLength(1);
    process.env.ADJUNCT_LOG_LEVEL = 'loud';
    expect(() => resolveLogLevel()).toThrow(/invalid log level "loud".*ADJUNCT_LOG_LEVEL/);
  });

  it('--log-level sets the level for the command (before or after the command name)', async () => {
    delete process.env.ADJUNCT_LOG_LEVEL;
    const program = buildProgram().exitOverride();
    program.commands.find((c) => c.name() === 'config-schema')!.action(() => undefined);
    await program.parseAsync(['node', 'adjunct', 'config-schema', '--log-level', 'error']);
    expect(process.env.ADJUNCT_LOG_LEVEL).toBe('error');
    await buildProgram()
      .exitOverride()
      .parseAsync(['node', 'adjunct', '--log-level', 'trace', 'config-schema'])
      .catch(() => undefined);
    expect(process.env.ADJUNCT_LOG_LEVEL).toBe('trace');
  });

  it('a JSON line never repeats a key: bound keys, base keys and msg are written once', () => {
    delete process.env.ADJUNCT_LOG_LEVEL;
    const { lines, logger } = capture('info');
    const child = logger.child({ pipeline: 'rates' }).child({ generation: 2 });
    child.info({ pipeline: 'rates', generation: 2, app: 'x', msg: 'dup', partition: 3 }, 'bootstrap progress');
    child.info('plain');
    expect(lines).toHaveLength(2);
    for (const line of lines) {
      const keys = topLevelKeys(line);
      expect(keys).toEqual([...new Set(keys)]);
    }
    expect(JSON.parse(lines[0])).toMatchObject({
      pipeline: 'rates',
      generation: 2,
      app: 'adjunct',
      partition: 3,
      msg: 'bootstrap progress',
    });
  });
});

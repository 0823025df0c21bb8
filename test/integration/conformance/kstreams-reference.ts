/** Builds (once, cached by content hash) and drives the Kafka Streams reference program in test/conformance/kstreams. */
import { ChildProcess, spawn, spawnSync } from 'child_process';
import { createHash } from 'crypto';
import * as fs from 'fs';
import * as os from 'os';
import * as path from 'path';
import { createInterface } from 'readline';
import { findJava } from '../../../tools/devstack/process';

/** Folder of the Maven project (pom.xml and the Java source). */
export const REFERENCE_PROJECT = path.resolve(__dirname, '../../conformance/kstreams');
const MAIN_CLASS = 'adjunct.conformance.VersionedStoreReference';

/** A version as both sides report it: validTo null when the version is (or was reported as) the latest. */
export interface Version {
  value: string;
  timestamp: number;
  validTo: number | null;
}

/** One question to both stores: the latest / as-of get (VersionedKeyQuery) or a history (MultiVersionedKeyQuery, ascending). */
export type Probe =
  | { op: 'get'; partition: number; key: string; asOf?: number }
  | { op: 'history'; partition: number; key: string; fromTime: number; toTime: number };

/** The answer to a probe: a version or null for a get, the versions in ascending order for a history. */
export type ProbeAnswer = Version | null | Version[];

function sourceFiles(dir: string): string[] {
  return fs
    .readdirSync(dir, { withFileTypes: true })
    .flatMap((e) => {
      const p = path.join(dir, e.name);
      return e.isDirectory() ? sourceFiles(p) : [p];
    })
    .sort();
}

/** The Java 17 the stack runs on (ADJUNCT_JAVA, JAVA_HOME, PATH or /usr/lib/jvm), and the environment that makes Maven use it. */
function java17(): { bin: string; env: NodeJS.ProcessEnv } {
  const bin = findJava();
  const env = path.isAbsolute(bin) ? { ...process.env, JAVA_HOME: path.dirname(path.dirname(fs.realpathSync(bin))) } : process.env;
  return { bin, env };
}

/** Compiles the reference into ~/.cache/adjunct/kstreams-reference/<hash of pom and sources> unless already there; returns its classpath. */
export function buildReference(): string {
  const inputs = [path.join(REFERENCE_PROJECT, 'pom.xml'), ...sourceFiles(path.join(REFERENCE_PROJECT, 'src'))];
  const hash = createHash('sha256');
  for (const f of inputs) hash.update(path.relative(REFERENCE_PROJECT, f)).update('\0').update(fs.readFileSync(f)).update('\0');
  const dir = path.join(os.homedir(), '.cache', 'adjunct', 'kstreams-reference', hash.digest('hex').slice(0, 16));
  const cpFile = path.join(dir, 'classpath.txt');
  if (!fs.existsSync(cpFile)) {
    const tmp = `${dir}.tmp-${process.pid}`;
    fs.rmSync(tmp, { recursive: true, force: true });
    const r = spawnSync(
      'mvn',
      [
        '-B',
        '-q',
        `-Dreference.buildDir=${tmp}`,
        'compile',
        'dependency:build-classpath',
        `-Dmdep.outputFile=${path.join(tmp, 'classpath.txt')}`,
      ],
      { cwd: REFERENCE_PROJECT, env: java17().env, encoding: 'utf8', maxBuffer: 64 * 1024 * 1024 },
    );
    if (r.status !== 0)
      throw new Error(
        `building the Kafka Streams reference failed (mvn exit ${r.status ?? r.signal}):\n${`${r.stdout}\n${r.stderr}`.slice(-4000)}`,
      );
    fs.rmSync(dir, { recursive: true, force: true });
    fs.renameSync(tmp, dir);
  }
  return [path.join(dir, 'classes'), fs.readFileSync(cpFile, 'utf8').trim()].join(path.delimiter);
}

/** A running reference application: a Kafka Streams app materialising one topic into a versioned store, answering IQv2 probes. */
export class KStreamsReference {
  private readonly pending = new Map<number, (line: Record<string, unknown>) => void>();
  private nextId = 1;
  private log = '';
  /** The application's latest KafkaStreams.State. */
  state = 'CREATED';
  private readonly exited: Promise<number | null>;
  private readonly running: Promise<void>;

  private constructor(
    private readonly child: ChildProcess,
    private readonly stateDir: string,
  ) {
    let onRunning: () => void = () => undefined;
    this.running = new Promise((resolve) => (onRunning = resolve));
    this.exited = new Promise((resolve) => child.on('exit', (code) => resolve(code)));
    child.stderr!.on('data', (d: Buffer) => (this.log = (this.log + d.toString()).slice(-20_000)));
    createInterface({ input: child.stdout! }).on('line', (text) => {
      const line = JSON.parse(text) as Record<string, unknown>;
      if (line.event === 'state') this.state = String(line.state);
      if (line.state === 'RUNNING') onRunning();
      const done = typeof line.id === 'number' ? this.pending.get(line.id) : undefined;
      if (done) {
        this.pending.delete(line.id as number);
        done(line);
      }
    });
  }

  /** Starts the application on the topic (unique application.id, state in a temp folder) and waits until it is RUNNING. */
  static async start(
    classpath: string,
    opts: { bootstrap: string; topic: string; applicationId: string; historyRetentionMs: number },
  ): Promise<KStreamsReference> {
    const stateDir = fs.mkdtempSync(path.join(os.tmpdir(), 'adjunct-kstreams-'));
    const jvm = [
      '-Xmx256m',
      '-XX:+UseSerialGC',
      '-XX:TieredStopAtLevel=1',
      '-Dorg.slf4j.simpleLogger.defaultLogLevel=warn',
      // "Returning null for expired get" and "Skipping record for expired put" are expected here.
      '-Dorg.slf4j.simpleLogger.log.org.apache.kafka.streams.state.internals.RocksDBVersionedStore=error',
    ];
    const child = spawn(
      java17().bin,
      [...jvm, '-cp', classpath, MAIN_CLASS, opts.bootstrap, opts.topic, opts.applicationId, stateDir, String(opts.historyRetentionMs)],
      { stdio: ['pipe', 'pipe', 'pipe'] },
    );
    const ref = new KStreamsReference(child, stateDir);
    const failed = ref.exited.then((code) => {
      throw new Error(`Kafka Streams reference exited (${code}) before RUNNING:\n${ref.log}`);
    });
    const timeout = new Promise<never>((_, reject) =>
      setTimeout(() => reject(new Error(`Kafka Streams reference not RUNNING within 60 s:\n${ref.log}`)), 60_000).unref(),
    );
    try {
      await Promise.race([ref.running, failed, timeout]);
    } catch (e) {
      await ref.close();
      throw e;
    }
    failed.catch(() => undefined);
    return ref;
  }

  /** Answers every probe (in order) through IQv2 on the probe's partition; throws on any failed query. */
  async ask(probes: Probe[]): Promise<ProbeAnswer[]> {
    const answers = probes.map((p) => {
      const id = this.nextId++;
      const line = new Promise<Record<string, unknown>>((resolve) => this.pending.set(id, resolve));
      this.child.stdin!.write(`${JSON.stringify({ id, ...p })}\n`);
      return line.then((l) => {
        if (typeof l.error === 'string') throw new Error(`reference failed on ${JSON.stringify(p)}: ${l.error}`);
        return l.result as ProbeAnswer;
      });
    });
    const died = this.exited.then((code) => {
      throw new Error(`Kafka Streams reference exited (${code}) while answering:\n${this.log}`);
    });
    return Promise.race([Promise.all(answers), died]);
  }

  /** The application's state and the tail of its log (warnings and errors), for failure messages. */
  diagnostics(): string {
    return `Kafka Streams reference state ${this.state}, exit code ${this.child.exitCode}, log tail:\n${this.log.slice(-4000)}`;
  }

  /** Ends the application (end of input closes Kafka Streams; killed after 20 s) and removes its state folder. */
  async close(): Promise<void> {
    if (this.child.exitCode === null && this.child.signalCode === null) {
      this.child.stdin!.end();
      const timer = setTimeout(() => this.child.kill('SIGKILL'), 20_000);
      await this.exited;
      clearTimeout(timer);
    }
    fs.rmSync(this.stateDir, { recursive: true, force: true });
  }
}

/**
 * Resolves the stack's binaries from Maven Central through `mvn` into the shared cache folder.
 * Each artifact lands in a temp folder that is renamed into place, so a half-finished download is never reused.
 */
import { execFile } from 'child_process';
import * as fs from 'fs';
import * as path from 'path';

/** Marker file written once a cache entry is complete. */
const COMPLETE = '.complete';

let queue: Promise<unknown> = Promise.resolve();

/** Runs Maven invocations one at a time (concurrent writes to ~/.m2 are not safe with Maven 3.8). */
function serialised<T>(fn: () => Promise<T>): Promise<T> {
  const next = queue.then(fn, fn);
  queue = next.catch(() => undefined);
  return next;
}

function run(cmd: string, args: string[], cwd?: string): Promise<void> {
  return new Promise((resolve, reject) => {
    execFile(
      cmd,
      args,
      { cwd, maxBuffer: 64 * 1024 * 1024, env: { ...process.env, MAVEN_OPTS: process.env.MAVEN_OPTS ?? '-Xmx512m' } },
      (err, stdout, stderr) => {
        if (err) {
          const out = `${stdout}\n${stderr}`.trim().split('\n').slice(-30).join('\n');
          reject(new Error(`${cmd} ${args.join(' ')} failed: ${err.message}\n${out}`));
        } else resolve();
      },
    );
  });
}

async function intoCache(target: string, fill: (tmp: string) => Promise<void>): Promise<string> {
  if (fs.existsSync(path.join(target, COMPLETE))) return target;
  return serialised(async () => {
    if (fs.existsSync(path.join(target, COMPLETE))) return target;
    const tmp = `${target}.tmp-${process.pid}`;
    fs.rmSync(tmp, { recursive: true, force: true });
    fs.mkdirSync(tmp, { recursive: true });
    try {
      await fill(tmp);
      fs.writeFileSync(path.join(tmp, COMPLETE), new Date().toISOString());
      fs.rmSync(target, { recursive: true, force: true });
      fs.renameSync(tmp, target);
    } catch (e) {
      fs.rmSync(tmp, { recursive: true, force: true });
      throw e;
    }
    return target;
  });
}

/** Copies the runtime dependencies of a pom into `<target>/libs` (once); returns the libs folder. */
export async function resolvePomLibs(pom: string, target: string): Promise<string> {
  await intoCache(target, (tmp) =>
    run('mvn', [
      '-q',
      '-B',
      'dependency:copy-dependencies',
      `-DoutputDirectory=${path.join(tmp, 'libs')}`,
      '-DincludeScope=runtime',
      '-f',
      pom,
    ]),
  );
  return path.join(target, 'libs');
}

/** Downloads one Maven artifact (groupId:artifactId:version:type[:classifier]) and unpacks the tarball into target (once). */
export async function resolveTarball(coordinates: string, target: string): Promise<string> {
  return intoCache(target, async (tmp) => {
    const dl = path.join(tmp, '.download');
    await run('mvn', ['-q', '-B', 'dependency:copy', `-Dartifact=${coordinates}`, `-DoutputDirectory=${dl}`, '-Dmdep.useBaseVersion=true']);
    const files = fs.readdirSync(dl).filter((f) => f.endsWith('.tar.gz') || f.endsWith('.tgz'));
    if (files.length !== 1) throw new Error(`expected one tarball for ${coordinates} in ${dl}, found ${files.join(', ') || 'none'}`);
    await run('tar', ['-xzf', path.join(dl, files[0]), '-C', tmp]);
    fs.rmSync(dl, { recursive: true, force: true });
  });
}

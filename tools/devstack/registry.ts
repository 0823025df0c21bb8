/**
 * Apicurio Registry 3.3 (in-memory storage, Confluent-compatible API) for the dev stack, from the Maven Central tarball.
 */
import * as fs from 'fs';
import * as path from 'path';
import { STACK_HOST, VERSIONS, type StackSettings } from './endpoints';
import { resolveTarball } from './download';
import { findJava, withTimeout } from './process';
import type { LaunchSpec, ServiceDef } from './service';

/** Apicurio 3.3 is compiled for Java 21 (class file 65), so it needs a newer JVM than Kafka and Cassandra. */
const REGISTRY_JAVA = { min: 21, envVar: 'ADJUNCT_REGISTRY_JAVA' };

function dirs(s: StackSettings) {
  const home = path.join(s.stackDir, 'registry');
  return {
    home,
    logs: path.join(home, 'logs'),
    app: path.join(s.cacheDir, `apicurio-registry-${VERSIONS.registry}`),
  };
}

/** The Apicurio Registry service definition. */
export const registryService: ServiceDef = {
  name: 'registry',
  kind: 'registry',
  host: STACK_HOST,
  startTimeoutMs: 60_000,
  ports: (s) => [s.registryPort, s.registryManagementPort],
  logFile: (s) => path.join(dirs(s).logs, 'registry.out'),

  async prepare(s) {
    const d = dirs(s);
    await resolveTarball(`io.apicurio:apicurio-registry-app:${VERSIONS.registry}:tar.gz:all`, d.app);
    if (!fs.existsSync(path.join(d.app, 'quarkus-run.jar'))) throw new Error(`quarkus-run.jar missing in ${d.app}`);
    fs.mkdirSync(d.logs, { recursive: true });
  },

  launch(s): LaunchSpec {
    const d = dirs(s);
    return {
      command: findJava(REGISTRY_JAVA),
      args: [
        '-Xms64m',
        '-Xmx384m',
        '-XX:+UseSerialGC',
        '-XX:TieredStopAtLevel=1',
        '-Djava.awt.headless=true',
        `-Dquarkus.http.host=${STACK_HOST}`,
        `-Dquarkus.http.port=${s.registryPort}`,
        `-Dquarkus.management.host=${STACK_HOST}`,
        `-Dquarkus.management.port=${s.registryManagementPort}`,
        '-jar',
        path.join(d.app, 'quarkus-run.jar'),
      ],
      cwd: d.home,
    };
  },

  async probe(s) {
    const url = `http://${STACK_HOST}:${s.registryPort}/apis/ccompat/v7/subjects`;
    const res = await withTimeout(
      fetch(url, { headers: { accept: 'application/vnd.schemaregistry.v1+json, application/json' } }),
      5000,
      `GET ${url}`,
    );
    await res.arrayBuffer();
    if (res.status !== 200) throw new Error(`GET ${url} returned ${res.status}`);
  },
};

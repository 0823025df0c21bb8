/**
 * Resolves what the stand-in images are built from — the devstack's Kafka, Cassandra and registry artifacts (downloaded once
 * into the shared cache), the Kafka command-line tools, and the Java 21+ runtime the registry needs — and prints their folders
 * as JSON for tools/container/prepare.sh.
 */
import * as fs from 'fs';
import * as path from 'path';
import { resolvePomLibs, resolveTarball } from '../devstack/download';
import { stackSettings, VERSIONS } from '../devstack/endpoints';
import { findJava } from '../devstack/process';

/** Folders the stand-in images copy from. */
export interface ContainerArtifacts {
  kafkaLibs: string;
  kafkaToolsLibs: string;
  cassandraLibs: string;
  registryApp: string;
  registryJavaHome: string;
}

/** Downloads (once) and locates every artifact the stand-in images need. */
export async function resolveArtifacts(): Promise<ContainerArtifacts> {
  const s = stackSettings();
  const pom = (...p: string[]) => path.join(s.repoRoot, 'tools', ...p, 'pom.xml');
  const cached = (name: string) => path.join(s.cacheDir, name);
  const kafkaLibs = await resolvePomLibs(pom('devstack', 'poms', 'kafka'), cached(`kafka-${VERSIONS.kafka}`));
  const kafkaToolsLibs = await resolvePomLibs(pom('container', 'poms', 'kafka-tools'), cached(`kafka-tools-${VERSIONS.kafka}`));
  const cassandraLibs = await resolvePomLibs(pom('devstack', 'poms', 'cassandra'), cached(`cassandra-${VERSIONS.cassandra}`));
  const registryApp = await resolveTarball(
    `io.apicurio:apicurio-registry-app:${VERSIONS.registry}:tar.gz:all`,
    cached(`apicurio-registry-${VERSIONS.registry}`),
  );
  const java = fs.realpathSync(findJava({ min: 21, envVar: 'ADJUNCT_REGISTRY_JAVA' }));
  return { kafkaLibs, kafkaToolsLibs, cassandraLibs, registryApp, registryJavaHome: path.dirname(path.dirname(java)) };
}

if (require.main === module) {
  resolveArtifacts().then(
    (a) => process.stdout.write(`${JSON.stringify(a)}\n`),
    (e: unknown) => {
      process.stderr.write(`${e instanceof Error ? e.message : String(e)}\n`);
      process.exit(1);
    },
  );
}

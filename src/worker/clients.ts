import * as fs from 'fs';
import { auth, Client } from 'cassandra-driver';
import { Admin, Kafka, logLevel, SASLOptions } from 'kafkajs';
import type { AdjunctConfig } from '../config/schema';
import { AdjunctError } from '../errors';
import { installFastVarLong } from '../kafka/fast-varlong';
import { installFastRecordDecoding } from '../kafka/record-decoding-install';
import {
  installLeanBatchRequest,
  installLeanFrameWriter,
  installLeanMurmur3,
  installLeanPreparedBatch,
  installLeanRowParsing,
} from '../store/cassandra';
import { Logger } from '../observability/logger';

type Tls = boolean | { ca?: string; cert?: string; key?: string; rejectUnauthorized: boolean } | undefined;

/** Reads a PEM given inline or as a file path. */
function pem(v: string | undefined): string | undefined {
  if (!v) return undefined;
  return v.includes('-----BEGIN') ? v : fs.readFileSync(v, 'utf8');
}

/** Node TLS options from the config's TLS section. */
export function tlsOptions(t: Tls): boolean | { ca?: string[]; cert?: string; key?: string; rejectUnauthorized: boolean } | undefined {
  if (t === undefined || t === false) return undefined;
  if (t === true) return true;
  const ca = pem(t.ca);
  return { ca: ca ? [ca] : undefined, cert: pem(t.cert), key: pem(t.key), rejectUnauthorized: t.rejectUnauthorized };
}

/** Variants of the kafkajs client: the start-up probe's makes one try per call and logs kafkajs's lines at debug. */
export interface KafkaClientVariant {
  clientIdSuffix?: string;
  /** One try per call (kafkajs retries nothing): the caller retries with its own bound. */
  noRetries?: boolean;
  /** kafkajs's own error and warning lines at debug level (the caller reports the failures). */
  quiet?: boolean;
}

/** Creates the kafkajs client, logging through pino (with the faster record-timestamp decoding, see fast-varlong). */
export function createKafka(cfg: AdjunctConfig['kafka'], logger: Logger, variant: KafkaClientVariant = {}): Kafka {
  installFastVarLong();
  const log = logger.child({ component: 'kafkajs' });
  log.debug({ fastDecoding: installFastRecordDecoding() }, 'kafkajs record decoding (fast paths in use)');
  const loud = variant.quiet !== true;
  return new Kafka({
    clientId: cfg.clientId + (variant.clientIdSuffix ?? ''),
    brokers: cfg.brokers,
    ssl: tlsOptions(cfg.ssl) as never,
    sasl: cfg.sasl as SASLOptions | undefined,
    connectionTimeout: cfg.connectionTimeout,
    requestTimeout: cfg.requestTimeout,
    logLevel: logLevel.WARN,
    logCreator:
      () =>
      ({ level, log: entry }) => {
        const { message, ...rest } = entry;
        const fn =
          loud && level <= logLevel.ERROR
            ? log.error.bind(log)
            : loud && level === logLevel.WARN
              ? log.warn.bind(log)
              : log.debug.bind(log);
        fn(rest, message);
      },
    retry: variant.noRetries ? { retries: 0 } : { retries: 8, initialRetryTime: 300, maxRetryTime: 10_000 },
  });
}

/**
 * Connects an admin client and loads the cluster's broker list. Without it kafkajs's first group-coordinator lookup
 * (the start-up offset check of a pipeline) finds no broker, loads the metadata, and still waits its initial retry
 * time (300 ms) before asking again.
 */
export async function connectAdmin(admin: Admin): Promise<void> {
  await admin.connect();
  try {
    await admin.describeCluster();
  } catch (e) {
    // kafkajs without retries (the start-up probe) answers a metadata request met by a leader election with nothing,
    // and describeCluster then fails on destructuring it (a TypeError): the cluster is not ready yet, a later try works.
    if (e instanceof TypeError)
      throw new AdjunctError(`the broker list could not be loaded (${e.message})`, {
        code: 'KAFKA_UNAVAILABLE',
        retriable: true,
        stage: 'worker',
        cause: e,
      });
    throw e;
  }
}

/**
 * The native-protocol port the contact points name (`host:port`, all alike), or undefined for the driver's 9042.
 * The driver reaches the peers it discovers on this port, so without it a cluster on another port is half-reached.
 */
export function contactPointPort(contactPoints: readonly string[]): number | undefined {
  const ports = new Set(contactPoints.map((c) => /^(?:\[[^\]]+\]|[^:]+):(\d{1,5})$/.exec(c)?.[1]));
  if (ports.size !== 1) return undefined;
  const [only] = ports;
  return only === undefined ? undefined : Number(only);
}

/**
 * Creates the Cassandra client (token-aware, prepared statements, configured consistency and timeouts), with the
 * driver's leaner request writing, batch bodies, batch preparation, routing tokens and row parsing (fast-frame-writer,
 * fast-batch-request, fast-prepared-batch, fast-murmur3, fast-row-parsing). The batch preparation's self-check settles in microtasks, before any connection can answer, so
 * it is decided before the first request.
 */
export function createCassandra(cfg: AdjunctConfig['cassandra']): Client {
  installLeanFrameWriter();
  installLeanBatchRequest();
  void installLeanPreparedBatch();
  installLeanMurmur3();
  installLeanRowParsing();
  const ssl = tlsOptions(cfg.ssl);
  const port = contactPointPort(cfg.contactPoints);
  return new Client({
    contactPoints: cfg.contactPoints,
    protocolOptions: port === undefined ? undefined : { port },
    localDataCenter: cfg.localDataCenter,
    authProvider: cfg.auth ? new auth.PlainTextAuthProvider(cfg.auth.username, cfg.auth.password) : undefined,
    sslOptions: ssl === true ? {} : (ssl as never),
    socketOptions: { readTimeout: cfg.requestTimeout, connectTimeout: 5000 },
    pooling: { maxRequestsPerConnection: 2048 },
    queryOptions: { prepare: true },
  });
}

/**
 * Side-effect module: installs the faster kafkajs record decoding (record-decoding-install.ts) before kafkajs loads.
 * The CLI and the bench child import it before anything that imports kafkajs (the package entry does not: the library
 * API patches nothing); imported later, the worker's Kafka client factory still installs what is not yet bound.
 */
import { installFastRecordDecoding } from './record-decoding-install';

installFastRecordDecoding();

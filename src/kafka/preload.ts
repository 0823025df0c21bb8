/**
 * Side-effect module: installs the faster kafkajs record decoding (record-decoding-install.ts) before kafkajs loads.
 * Import it before anything that imports kafkajs; imported later it changes nothing.
 */
import { installFastRecordDecoding } from './record-decoding-install';

installFastRecordDecoding();

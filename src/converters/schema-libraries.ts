/* eslint-disable @typescript-eslint/no-require-imports -- the one place these libraries are loaded, on first use */
import type * as Avsc from 'avsc';
import type * as Protobuf from 'protobufjs';
import type * as Registry from '@kafkajs/confluent-schema-registry';

let avsc: typeof Avsc | undefined;
let protobuf: typeof Protobuf | undefined;
let registry: typeof Registry | undefined;

/**
 * avsc, loaded on first use. The schema libraries (avsc, protobufjs, the registry client with its JSON Schema
 * validator) take ≈ 150 ms to load: a worker, CLI command or reader whose pipelines use no registry format skips them.
 */
export function avscLibrary(): typeof Avsc {
  return (avsc ??= require('avsc') as typeof Avsc);
}

/** protobufjs, loaded on first use (see avscLibrary). */
export function protobufLibrary(): typeof Protobuf {
  return (protobuf ??= require('protobufjs') as typeof Protobuf);
}

/** @kafkajs/confluent-schema-registry, loaded on first use (see avscLibrary). */
export function registryLibrary(): typeof Registry {
  return (registry ??= require('@kafkajs/confluent-schema-registry') as typeof Registry);
}

import type { SchemaRegistry } from '@kafkajs/confluent-schema-registry';
import { ConfigError, ErrorStage } from '../errors';
import { RegistryConverter } from './registry-converter';
import { BytesConverter, JsonConverter, StringConverter } from './basic-converters';
import { Converter } from './converter';
import { registryLibrary } from './schema-libraries';
import { TimeoutMiddleware } from 'mappersmith/middleware/timeout';

/** Registry connection settings. */
export interface RegistrySettings {
  url: string;
  auth?: { username: string; password: string };
}

/** How long one registry request may take (a frozen registry would otherwise hold the record path forever). */
export const REGISTRY_REQUEST_TIMEOUT_MS = 10_000;

/** Creates a SchemaRegistry client (parsed schemas of every format are cached by the client per id). */
export function createRegistry(settings: RegistrySettings): SchemaRegistry {
  const { SchemaRegistry, SchemaType } = registryLibrary();
  return new SchemaRegistry(
    {
      host: settings.url,
      auth: settings.auth,
      clientId: 'adjunct',
      retry: { retries: 2, initialRetryTimeInSecs: 0.2, maxRetryTimeInSecs: 2 },
      middlewares: [TimeoutMiddleware(REGISTRY_REQUEST_TIMEOUT_MS)],
    },
    {
      // Payloads are validated against their JSON Schema; keywords and formats ajv does not know are ignored, not fatal.
      [SchemaType.JSON]: { strict: false, validateFormats: false, validateSchema: false, logger: false },
    },
  );
}

/** Builds the converter named in a pipeline config. */
export function createConverter(name: string, stage: ErrorStage, registry?: SchemaRegistry): Converter {
  switch (name) {
    case 'string':
      return new StringConverter(stage);
    case 'json':
      return new JsonConverter(stage);
    case 'bytes':
      return new BytesConverter();
    case 'avro':
    case 'json-schema':
    case 'protobuf':
      if (!registry) throw new ConfigError(`${name} converter needs a schema registry`);
      return new RegistryConverter(name, registry, stage);
    default:
      throw new ConfigError(`unknown converter "${name}"`);
  }
}

import { Serde } from '../types';
import { serdeError } from './serde-error';

/** UTF-8 string serde (the default for keys and values); UTF-8 byte order equals code-point order. */
export const stringSerde: Serde<string> = {
  name: 'string',
  serialize(value: string): Buffer {
    if (typeof value !== 'string') throw serdeError('string', `expected a string, got ${typeof value}`);
    return Buffer.from(value, 'utf8');
  },
  deserialize(bytes: Buffer): string {
    return bytes.toString('utf8');
  },
};

/** Identity serde for raw bytes. */
export const bufferSerde: Serde<Buffer> = {
  name: 'buffer',
  serialize(value: Buffer): Buffer {
    if (!Buffer.isBuffer(value)) throw serdeError('buffer', `expected a Buffer, got ${typeof value}`);
    return value;
  },
  deserialize(bytes: Buffer): Buffer {
    return Buffer.from(bytes);
  },
};

/** JSON serde (UTF-8 JSON text); values JSON cannot represent (undefined, BigInt, cycles) throw InvalidArgumentError. */
export function jsonSerde<T>(): Serde<T> {
  return {
    name: 'json',
    serialize(value: T): Buffer {
      let text: string | undefined;
      try {
        text = JSON.stringify(value);
      } catch (e) {
        throw serdeError('json', `value is not serialisable: ${(e as Error).message}`, e);
      }
      if (text === undefined) throw serdeError('json', `value of type ${typeof value} is not serialisable`);
      return Buffer.from(text, 'utf8');
    },
    deserialize(bytes: Buffer): T {
      try {
        return JSON.parse(bytes.toString('utf8')) as T;
      } catch (e) {
        throw serdeError('json', `bytes are not valid JSON: ${(e as Error).message}`, e);
      }
    },
  };
}

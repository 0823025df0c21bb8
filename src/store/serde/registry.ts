import { InvalidArgumentError } from '../../errors';
import { Serde } from '../types';
import { bufferSerde, jsonSerde, stringSerde } from './basic-serdes';
import { int64KeySerde, intKeySerde } from './int-key-serdes';
import { tupleKeySerde } from './tuple-key-serde';

/** Names accepted by serdeByName. */
export type SerdeName = 'string' | 'buffer' | 'json' | 'int64' | 'int' | 'tuple';

/** Names of every built-in serde. */
export const SERDE_NAMES: readonly SerdeName[] = ['string', 'buffer', 'json', 'int64', 'int', 'tuple'];

/** Looks up a built-in serde by its config name; unknown names throw InvalidArgumentError. */
export function serdeByName(name: string): Serde<unknown> {
  switch (name) {
    case 'string':
      return stringSerde as Serde<unknown>;
    case 'buffer':
      return bufferSerde as Serde<unknown>;
    case 'json':
      return jsonSerde<unknown>();
    case 'int64':
      return int64KeySerde as Serde<unknown>;
    case 'int':
      return intKeySerde as Serde<unknown>;
    case 'tuple':
      return tupleKeySerde as Serde<unknown>;
    default:
      throw new InvalidArgumentError(`unknown serde '${name}' (expected one of ${SERDE_NAMES.join(', ')})`, { serde: name });
  }
}

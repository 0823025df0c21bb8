/** Kafka protocol errors as kafkajs raises them, for unit tests of retry decisions. */
import { KafkaJSProtocolError } from 'kafkajs';

/** A Kafka protocol error as kafkajs raises it from an answer's error code. */
export function protocolError(type: string, code: number, retriable = true): KafkaJSProtocolError {
  return new KafkaJSProtocolError({ type, code, retriable, message: `${type} from the broker` } as unknown as Error);
}

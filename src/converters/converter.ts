/** Decodes the key or value bytes of a Kafka record into a JS value (null stays null: a Kafka tombstone). */
export interface Converter {
  /** Name used in configs (`string`, `json`, `avro`, `json-schema`, `protobuf`, `bytes`). */
  readonly name: string;
  /** Decodes bytes; throws BadRecordError for undecodable input, a retriable AdjunctError for transient failures. */
  decode(bytes: Buffer | null): Promise<unknown>;
  /** The same decoding without a promise, for converters that never wait (the per-record fast path); absent otherwise. */
  decodeSync?(bytes: Buffer | null): unknown;
}

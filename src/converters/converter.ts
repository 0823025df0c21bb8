/** Decodes the key or value bytes of a Kafka record into a JS value (null stays null: a Kafka tombstone). */
export interface Converter {
  /** Name used in configs (`string`, `json`, `avro`, `json-schema`, `protobuf`, `bytes`). */
  readonly name: string;
  /** Decodes bytes; throws BadRecordError for undecodable input, a retriable AdjunctError for transient failures. */
  decode(bytes: Buffer | null): Promise<unknown>;
  /** The same decoding without a promise, for converters that never wait (the per-record fast path); absent otherwise. */
  decodeSync?(bytes: Buffer | null): unknown;
  /**
   * Checks the bytes as `decodeSync` would without building the value, for a value the store keeps as its bytes: null
   * for a tombstone or a null value, UNPARSED_VALUE for any other valid value nested at most `maxDepth` deep, else the
   * full decode's answer (the value, or the error it throws). Absent when the converter cannot check without building.
   */
  validateSync?(bytes: Buffer | null, maxDepth: number): unknown;
}

/**
 * The decoded value of a record whose bytes were checked but not built (`Converter.validateSync`): only extractors
 * that never look inside the value (`Extractor.readsValue === false`) see it, and the store writes the record's bytes.
 */
export const UNPARSED_VALUE: object = Object.freeze({});

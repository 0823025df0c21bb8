/** A decoded Kafka record as seen by extractors (read-only: a record without headers shares one frozen empty object). */
export interface SourceRecord {
  topic: string;
  partition: number;
  offset: string;
  /** Kafka record timestamp, epoch ms. */
  timestamp: number;
  /** Decoded key (null when the record has no key). */
  key: unknown;
  /** Decoded value (null for a Kafka tombstone). */
  value: unknown;
  headers: Readonly<Record<string, Buffer | string | undefined>>;
  /** Stream time of the writer of this record's partition before this record (versioned stores), when it has one. */
  streamTime?: number;
}

/** What an extractor produces for the store: value null means tombstone. */
export interface Extracted {
  key: unknown;
  value: unknown | null;
  timestamp: number;
  /**
   * The record's value bytes, set (by the record processor) when `value` is the record's decoded value itself: a store
   * whose value serde is the converter's format writes these bytes instead of serialising the value again.
   */
  valueBytes?: Buffer;
  /**
   * The record's key bytes, set (by the record processor) when `key` is the record's decoded string key itself and the
   * bytes are exactly its UTF-8 encoding: a store whose key serde is `string` writes them instead of encoding the key again.
   */
  keyBytes?: Buffer;
}

/** Returned by an extractor to leave a record out of the store on purpose (counted as skipped, never silent). */
export interface Skip {
  skip: true;
  reason: string;
}

/** Result of an extraction. */
export type ExtractResult = Extracted | Skip;

/** Pulls key, value and timestamp out of a record (Samza's adjunct-data extractor model). */
export interface Extractor {
  extract(record: SourceRecord): ExtractResult | Promise<ExtractResult>;
  /** True when every extracted value is the record's decoded value itself, unchanged (a whole-value extractor). */
  readonly keepsValue?: boolean;
  /**
   * False when the extractor never looks inside the record value (key, timestamp, filters and value come from elsewhere
   * or take the value whole): it may then be given UNPARSED_VALUE for a value the store keeps as its bytes.
   */
  readonly readsValue?: boolean;
  /** The deepest key or value (nested objects/arrays) the extractor accepts, when it limits them. */
  readonly maxValueDepth?: number;
}

/** Factory signature a custom extractor module may export (`createExtractor`). */
export type ExtractorFactory = (options: Record<string, unknown>) => Extractor | Promise<Extractor>;

/** Returns true for a Skip result. */
export function isSkip(r: ExtractResult): r is Skip {
  return (r as Skip).skip === true;
}

/** Creates a Skip result. */
export function skip(reason: string): Skip {
  return { skip: true, reason };
}

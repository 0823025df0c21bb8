import { Converter, StringConverter } from '../converters';
import { AdjunctError, asAdjunctError, BadRecordError, PipelineStage } from '../errors';
import { Extracted, Extractor, isSkip, Skip, SourceRecord } from '../extract';
import { SinkRecord } from './sink-record';

/** `e` as an AdjunctError of `stage`; an unexpected throw is a bad record of that stage. */
function atStage(e: unknown, stage: PipelineStage): AdjunctError {
  return asAdjunctError(e, (message, cause) => new BadRecordError(message, { stage, cause }), stage);
}

/** What a converted record becomes: something to write, or a Skip. */
export type Processed = Extracted | Skip;

/**
 * Kafka Connect's convertMessages for one record: key and value converters, then the extractor. With converters that
 * decode synchronously and a synchronous extractor, the result comes back without a promise (the per-record fast path).
 */
export class RecordProcessor {
  /**
   * Set when values are checked, not built: the store keeps a value as the record's bytes, the extractor never looks
   * inside it and passes it on whole, and the value converter can check without building (JSON). The depth limit is
   * the extractor's.
   */
  private readonly unparsedDepth: number | undefined;
  /** Set when the key converter is `string` and the store's key serde too: a decoded key re-encodes to the record's bytes. */
  private readonly keepsKeyBytes: boolean;

  /**
   * `o.storeKeepsValueBytes`: the store writes a value whole as the record's bytes when the formats agree;
   * `o.storeKeepsKeyBytes`: the store's key serde is `string` (store-wiring.ts).
   */
  constructor(
    private readonly keyConverter: Converter,
    private readonly valueConverter: Converter,
    private readonly extractor: Extractor,
    o: { storeKeepsValueBytes?: boolean; storeKeepsKeyBytes?: boolean } = {},
  ) {
    this.keepsKeyBytes = o.storeKeepsKeyBytes === true && keyConverter instanceof StringConverter;
    const unparsed =
      o.storeKeepsValueBytes === true &&
      extractor.keepsValue === true &&
      extractor.readsValue === false &&
      valueConverter.validateSync !== undefined;
    this.unparsedDepth = unparsed ? (extractor.maxValueDepth ?? Number.MAX_SAFE_INTEGER) : undefined;
  }

  /** Decodes and extracts one record (the writer's observed stream time is shown to the extractor): what to write, or a Skip. */
  process(r: SinkRecord, observedStreamTime: number): Processed | Promise<Processed> {
    const kc = this.keyConverter;
    const vc = this.valueConverter;
    if (kc.decodeSync === undefined || vc.decodeSync === undefined) return this.processAsync(r, observedStreamTime);
    let key: unknown;
    let value: unknown;
    try {
      key = kc.decodeSync(r.key);
    } catch (e) {
      throw atStage(e, 'key-convert');
    }
    try {
      value = this.unparsedDepth === undefined ? vc.decodeSync(r.value) : vc.validateSync!(r.value, this.unparsedDepth);
    } catch (e) {
      throw atStage(e, 'value-convert');
    }
    return this.extract(r, key, value, observedStreamTime);
  }

  private async processAsync(r: SinkRecord, observedStreamTime: number): Promise<Processed> {
    let key: unknown;
    let value: unknown;
    try {
      key = await this.keyConverter.decode(r.key);
    } catch (e) {
      throw atStage(e, 'key-convert');
    }
    try {
      value = await this.valueConverter.decode(r.value);
    } catch (e) {
      throw atStage(e, 'value-convert');
    }
    return this.extract(r, key, value, observedStreamTime);
  }

  private extract(r: SinkRecord, key: unknown, value: unknown, observedStreamTime: number): Processed | Promise<Processed> {
    const source: SourceRecord = {
      topic: r.topic,
      partition: r.partition,
      offset: r.offset,
      timestamp: Number(r.timestamp),
      key,
      value,
      headers: (r.headers ?? {}) as Record<string, Buffer | string | undefined>,
      streamTime: Number.isFinite(observedStreamTime) ? observedStreamTime : undefined,
    };
    let out: Processed | Promise<Processed>;
    try {
      out = this.extractor.extract(source);
    } catch (e) {
      throw atStage(e, 'extract');
    }
    if (out instanceof Promise) return out.catch((e: unknown) => Promise.reject(atStage(e, 'extract')));
    // A custom extractor's frozen result is left as it is.
    if (isSkip(out) || !Object.isExtensible(out)) return out;
    if (this.extractor.keepsValue === true && out.value === value && r.value !== null && !hasBom(r.value)) out.valueBytes = r.value;
    // The string converter decodes strictly (invalid UTF-8 is a bad record), so a decoded key without a byte-order mark
    // re-encodes to exactly the record's bytes.
    if (this.keepsKeyBytes && typeof key === 'string' && out.key === key && r.key !== null && !hasBom(r.key)) out.keyBytes = r.key;
    return out;
  }
}

/** A UTF-8 byte-order mark, which the converters drop from the decoded text: such bytes are not the text's encoding. */
function hasBom(b: Buffer): boolean {
  return b.length >= 3 && b[0] === 0xef && b[1] === 0xbb && b[2] === 0xbf;
}

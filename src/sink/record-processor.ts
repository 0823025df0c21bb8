import { Converter } from '../converters';
import { AdjunctError, asAdjunctError, BadRecordError, PipelineStage } from '../errors';
import { Extracted, Extractor, Skip } from '../extract';
import { SinkRecord } from './sink-record';

/** `e` as an AdjunctError of `stage`; an unexpected throw is a bad record of that stage. */
function atStage(e: unknown, stage: PipelineStage): AdjunctError {
  return asAdjunctError(e, (message, cause) => new BadRecordError(message, { stage, cause }), stage);
}

/** Kafka Connect's convertMessages for one record: key and value converters, then the extractor. */
export class RecordProcessor {
  constructor(
    private readonly keyConverter: Converter,
    private readonly valueConverter: Converter,
    private readonly extractor: Extractor,
  ) {}

  /** Decodes and extracts one record (the writer's observed stream time is shown to the extractor): what to write, or a Skip. */
  async process(r: SinkRecord, observedStreamTime: number): Promise<Extracted | Skip> {
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
    try {
      const headers = (r.headers ?? {}) as Record<string, Buffer | string | undefined>;
      const streamTime = Number.isFinite(observedStreamTime) ? observedStreamTime : undefined;
      return await this.extractor.extract({
        topic: r.topic,
        partition: r.partition,
        offset: r.offset,
        timestamp: Number(r.timestamp),
        key,
        value,
        headers,
        streamTime,
      });
    } catch (e) {
      throw atStage(e, 'extract');
    }
  }
}

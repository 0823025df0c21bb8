import { BadRecordError, ErrorStage } from '../errors';
import { Converter, UNPARSED_VALUE } from './converter';
import { scanJson, SCAN_NULL, SCAN_VALUE } from './json-scan';

/** UTF-8 string converter; rejects invalid UTF-8 instead of inserting replacement characters. */
export class StringConverter implements Converter {
  readonly name = 'string';
  private readonly decoder = new TextDecoder('utf-8', { fatal: true });
  constructor(private readonly stage: ErrorStage) {}
  async decode(bytes: Buffer | null): Promise<unknown> {
    return this.decodeSync(bytes);
  }
  decodeSync(bytes: Buffer | null): unknown {
    if (bytes === null) return null;
    try {
      return this.decoder.decode(bytes);
    } catch (e) {
      throw new BadRecordError('bytes are not valid UTF-8', { stage: this.stage, code: 'DECODE_FAILED', cause: e });
    }
  }
}

/** JSON converter (UTF-8 JSON text); `validateSync` checks a text without building it (json-scan.ts). */
export class JsonConverter implements Converter {
  readonly name = 'json';
  private readonly decoder = new TextDecoder('utf-8', { fatal: true });
  constructor(private readonly stage: ErrorStage) {}
  async decode(bytes: Buffer | null): Promise<unknown> {
    return this.decodeSync(bytes);
  }
  decodeSync(bytes: Buffer | null): unknown {
    if (bytes === null) return null;
    try {
      return JSON.parse(this.decoder.decode(bytes));
    } catch (e) {
      throw new BadRecordError(`invalid JSON: ${(e as Error).message}`, { stage: this.stage, code: 'DECODE_FAILED', cause: e });
    }
  }
  validateSync(bytes: Buffer | null, maxDepth: number): unknown {
    if (bytes === null) return null;
    const scan = scanJson(bytes, maxDepth);
    if (scan === SCAN_VALUE) return UNPARSED_VALUE;
    if (scan === SCAN_NULL) return null;
    return this.decodeSync(bytes);
  }
}

/** Raw bytes converter: the value is the Buffer itself. */
export class BytesConverter implements Converter {
  readonly name = 'bytes';
  async decode(bytes: Buffer | null): Promise<unknown> {
    return bytes;
  }
  decodeSync(bytes: Buffer | null): unknown {
    return bytes;
  }
}

import { AdjunctError, BadRecordError } from '../errors';
import { ColumnSchema, ColumnSource } from '../store/cassandra';
import { REGISTRY_REQUEST_TIMEOUT_MS, RegistrySettings } from './factory';
import { schemaFields } from './schema-columns';

/** The registry's answer for a subject version (Confluent REST API). */
interface SubjectVersion {
  id: number;
  version: number;
  schema: string;
  schemaType?: string;
}

/**
 * Typed columns from the latest schema of a registry subject (`<topic>-value`, TopicNameStrategy): one GET of
 * `/subjects/<subject>/versions/latest` per describe(). Unreachable / 5xx registries are retriable errors.
 */
export class RegistryColumnSource implements ColumnSource {
  constructor(
    private readonly settings: RegistrySettings,
    private readonly subject: string,
    private readonly fields?: string[],
  ) {}

  async describe(sample?: string[]): Promise<ColumnSchema> {
    const latest = await this.latest();
    const origin = `subject ${this.subject} version ${latest.version} (schema id ${latest.id})`;
    try {
      return { ...schemaFields(latest.schemaType ?? 'AVRO', latest.schema, this.fields, sample), origin };
    } catch (e) {
      throw new BadRecordError(`typed columns cannot be derived from ${origin}: ${(e as Error).message}`, {
        stage: 'write',
        code: 'TYPED_COLUMN_SCHEMA',
        cause: e,
      });
    }
  }

  private async latest(): Promise<SubjectVersion> {
    const url = `${this.settings.url.replace(/\/+$/, '')}/subjects/${encodeURIComponent(this.subject)}/versions/latest`;
    const headers: Record<string, string> = { accept: 'application/vnd.schemaregistry.v1+json, application/json' };
    if (this.settings.auth)
      headers.authorization = `Basic ${Buffer.from(`${this.settings.auth.username}:${this.settings.auth.password}`).toString('base64')}`;
    let res: Response;
    try {
      res = await fetch(url, { headers, signal: AbortSignal.timeout(REGISTRY_REQUEST_TIMEOUT_MS) });
    } catch (e) {
      throw new AdjunctError(`schema registry unavailable while reading subject ${this.subject}`, {
        code: 'REGISTRY_UNAVAILABLE',
        retriable: true,
        stage: 'write',
        cause: e,
      });
    }
    // Only "no such subject or version" is the schema's fault; credentials refused, rate limits and 5xx are outages.
    if (!res.ok && res.status !== 404)
      throw new AdjunctError(`schema registry answered ${res.status} for subject ${this.subject}`, {
        code: 'REGISTRY_UNAVAILABLE',
        retriable: true,
        stage: 'write',
      });
    if (res.status === 404)
      throw new BadRecordError(`schema registry has no latest version of subject ${this.subject} (HTTP ${res.status})`, {
        stage: 'write',
        code: 'UNKNOWN_SCHEMA',
      });
    let body: SubjectVersion;
    try {
      body = (await res.json()) as SubjectVersion;
    } catch (e) {
      // The answer broke off (a restart, the request timeout) or is not JSON (a proxy's page): an outage, not the record's.
      throw new AdjunctError(`schema registry sent an unreadable answer for subject ${this.subject}`, {
        code: 'REGISTRY_UNAVAILABLE',
        retriable: true,
        stage: 'write',
        cause: e,
      });
    }
    if (typeof body?.schema !== 'string' || typeof body.id !== 'number')
      throw new BadRecordError(`schema registry returned no schema for subject ${this.subject}`, {
        stage: 'write',
        code: 'UNKNOWN_SCHEMA',
      });
    return body;
  }
}

import { InvalidIdentifierError } from '../errors';

/** Throws InvalidIdentifierError unless name is a plain lowercase CQL identifier. */
export function assertIdentifier(name: string, what: string): string {
  if (typeof name !== 'string' || !/^[a-z][a-z0-9_]{0,47}$/.test(name)) {
    throw new InvalidIdentifierError(`invalid ${what} ${JSON.stringify(name)}: must match ^[a-z][a-z0-9_]{0,47}$`, { [what]: name });
  }
  return name;
}

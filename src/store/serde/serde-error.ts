import { InvalidArgumentError } from '../../errors';

/** Builds the InvalidArgumentError thrown by serdes for values they cannot encode or decode. */
export function serdeError(serde: string, message: string, cause?: unknown): InvalidArgumentError {
  const err = new InvalidArgumentError(`${serde} serde: ${message}`, { serde });
  if (cause !== undefined) (err as { cause?: unknown }).cause = cause;
  return err;
}

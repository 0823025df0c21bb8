/** Jest globalSetup of the unit project: records where sockets are opened, so the exit check can name a leaked one. */
import { recordSocketOrigins } from './open-sockets';
import { recordLateWork } from './late-work';

/** Starts recording socket origins in the jest process. */
export default async function globalSetup(): Promise<void> {
  recordSocketOrigins();
  recordLateWork();
}

import { validateTableName } from '../store/cassandra';

/** Table of a store generation: `<base>_g<generation>`. */
export function generationTable(baseTable: string, generation: number): string {
  return validateTableName(`${baseTable}_g${generation}`);
}

/** Consumer group of a pipeline generation: each generation has its own group, so a rebuild starts from the earliest offset. */
export function generationGroup(baseGroupId: string, pipeline: string, generation: number): string {
  return `${baseGroupId}.${pipeline}.g${generation}`;
}

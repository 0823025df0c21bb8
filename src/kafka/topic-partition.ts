/** `topic/partition`: the one spelling of a topic-partition key, in maps, persisted bootstrap JSON and messages. */
export const topicPartitionKey = (topic: string, partition: number): string => `${topic}/${partition}`;

/**
 * `topic:partition`: the persisted identity of a store writer (rows of `adjunct_stream_time` and the `writer` column of
 * versioned rows). It predates `topicPartitionKey` and keeps its spelling so that existing stream times and rows stay found.
 */
export const writerIdOf = (topic: string, partition: number): string => `${topic}:${partition}`;

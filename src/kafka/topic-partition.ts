/** `topic/partition`: the one spelling of a topic-partition key, in maps, persisted JSON, writer ids and messages. */
export const topicPartitionKey = (topic: string, partition: number): string => `${topic}/${partition}`;

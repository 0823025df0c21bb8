/** Kafka's internal topics, never consumed by a pattern (the consumer's exclude.internal.topics=true). */
const INTERNAL_TOPICS: ReadonlySet<string> = new Set(['__consumer_offsets', '__transaction_state', '__share_group_state']);

/** A predicate true for topic names the pattern matches as a whole (Java's `Pattern.matcher(topic).matches()`), internal topics excluded. */
export function topicMatcher(pattern: string): (topic: string) => boolean {
  const re = new RegExp(`^(?:${pattern})$`);
  return (topic) => !INTERNAL_TOPICS.has(topic) && re.test(topic);
}

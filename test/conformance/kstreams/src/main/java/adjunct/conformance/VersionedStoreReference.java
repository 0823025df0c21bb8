package adjunct.conformance;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.time.Instant;
import java.util.Properties;
import java.util.Set;
import org.apache.kafka.common.serialization.Serdes;
import org.apache.kafka.streams.KafkaStreams;
import org.apache.kafka.streams.StreamsBuilder;
import org.apache.kafka.streams.StreamsConfig;
import org.apache.kafka.streams.kstream.Consumed;
import org.apache.kafka.streams.processor.api.Processor;
import org.apache.kafka.streams.processor.api.ProcessorContext;
import org.apache.kafka.streams.processor.api.Record;
import org.apache.kafka.streams.query.MultiVersionedKeyQuery;
import org.apache.kafka.streams.query.Query;
import org.apache.kafka.streams.query.QueryResult;
import org.apache.kafka.streams.query.StateQueryRequest;
import org.apache.kafka.streams.query.VersionedKeyQuery;
import org.apache.kafka.streams.state.Stores;
import org.apache.kafka.streams.state.VersionedKeyValueStore;
import org.apache.kafka.streams.state.VersionedRecord;
import org.apache.kafka.streams.state.VersionedRecordIterator;

/**
 * Kafka Streams as the reference for adjunct's versioned stores.
 *
 * <p>Materialises a topic (String keys and values) into a {@code persistentVersionedKeyValueStore} with a processor that
 * calls the plain KIP-889 {@code put(key, value, recordTimestamp)} (a null value is a tombstone). Each input partition is
 * its own task with its own store, so each partition has its own stream time, as in any Kafka Streams application.
 *
 * <p>Usage: {@code VersionedStoreReference <bootstrap> <topic> <applicationId> <stateDir> <historyRetentionMs>}.
 * Prints {@code {"event":"state","state":"RUNNING"}} on every state change, and answers one JSON request per stdin line with
 * one JSON line on stdout, through IQv2:
 * <ul>
 *   <li>{@code {"id":1,"op":"get","partition":0,"key":"k"}} and {@code {..., "asOf":123}}: VersionedKeyQuery,
 *       answered {@code {"id":1,"result":null | {"value":..,"timestamp":..,"validTo":..|null}}};</li>
 *   <li>{@code {"id":2,"op":"history","partition":0,"key":"k","fromTime":1,"toTime":9}}: MultiVersionedKeyQuery in
 *       ascending order, answered {@code {"id":2,"result":[{...}, ...]}}.</li>
 * </ul>
 * A query that fails is answered {@code {"id":..,"error":"..."}}. Closes the application at end of input.
 */
public final class VersionedStoreReference {
    static final String STORE = "versioned";
    private static final ObjectMapper JSON = new ObjectMapper();

    private VersionedStoreReference() {
    }

    /** Puts every record into the versioned store with its record timestamp. */
    static final class PutWithRecordTimestamp implements Processor<String, String, Void, Void> {
        private VersionedKeyValueStore<String, String> store;

        @Override
        public void init(final ProcessorContext<Void, Void> context) {
            store = context.getStateStore(STORE);
        }

        @Override
        public void process(final Record<String, String> record) {
            store.put(record.key(), record.value(), record.timestamp());
        }
    }

    public static void main(final String[] args) throws Exception {
        if (args.length != 5) {
            System.err.println("usage: VersionedStoreReference <bootstrap> <topic> <applicationId> <stateDir> <historyRetentionMs>");
            System.exit(2);
        }
        final PrintStream out = new PrintStream(System.out, true, StandardCharsets.UTF_8);
        try (KafkaStreams streams = new KafkaStreams(topology(args[1], Long.parseLong(args[4])), config(args[0], args[2], args[3]))) {
            streams.setStateListener((now, before) -> out.println("{\"event\":\"state\",\"state\":\"" + now + "\"}"));
            streams.start();
            final BufferedReader in = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
            for (String line = in.readLine(); line != null; line = in.readLine()) {
                if (!line.isBlank()) {
                    out.println(JSON.writeValueAsString(answer(streams, JSON.readTree(line))));
                }
            }
            streams.close(Duration.ofSeconds(10));
        }
    }

    private static org.apache.kafka.streams.Topology topology(final String topic, final long historyRetentionMs) {
        final StreamsBuilder builder = new StreamsBuilder();
        builder.addStateStore(Stores.versionedKeyValueStoreBuilder(
                Stores.persistentVersionedKeyValueStore(STORE, Duration.ofMillis(historyRetentionMs)),
                Serdes.String(), Serdes.String()).withLoggingDisabled());
        builder.stream(topic, Consumed.with(Serdes.String(), Serdes.String())).process(PutWithRecordTimestamp::new, STORE);
        return builder.build();
    }

    private static Properties config(final String bootstrap, final String applicationId, final String stateDir) {
        final Properties p = new Properties();
        p.put(StreamsConfig.APPLICATION_ID_CONFIG, applicationId);
        p.put(StreamsConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap);
        p.put(StreamsConfig.STATE_DIR_CONFIG, stateDir);
        p.put(StreamsConfig.COMMIT_INTERVAL_MS_CONFIG, 100);
        p.put(StreamsConfig.NUM_STREAM_THREADS_CONFIG, 1);
        return p;
    }

    private static ObjectNode answer(final KafkaStreams streams, final JsonNode req) {
        final ObjectNode res = JSON.createObjectNode();
        res.set("id", req.get("id"));
        final int partition = req.get("partition").asInt();
        final String key = req.get("key").asText();
        try {
            if ("get".equals(req.get("op").asText())) {
                VersionedKeyQuery<String, String> q = VersionedKeyQuery.withKey(key);
                if (req.hasNonNull("asOf")) {
                    q = q.asOf(Instant.ofEpochMilli(req.get("asOf").asLong()));
                }
                res.set("result", record(query(streams, q, partition)));
            } else {
                final MultiVersionedKeyQuery<String, String> q = MultiVersionedKeyQuery.<String, String>withKey(key)
                        .fromTime(Instant.ofEpochMilli(req.get("fromTime").asLong()))
                        .toTime(Instant.ofEpochMilli(req.get("toTime").asLong()))
                        .withAscendingTimestamps();
                final ArrayNode versions = res.putArray("result");
                try (VersionedRecordIterator<String> it = query(streams, q, partition)) {
                    it.forEachRemaining(r -> versions.add(record(r)));
                }
            }
        } catch (final RuntimeException e) {
            res.put("error", String.valueOf(e.getMessage()));
        }
        return res;
    }

    /** Runs an IQv2 query on one partition's store, retrying briefly while the task is not (yet) queryable. */
    private static <R> R query(final KafkaStreams streams, final Query<R> query, final int partition) {
        final StateQueryRequest<R> request = StateQueryRequest.inStore(STORE).withQuery(query).withPartitions(Set.of(partition)).requireActive();
        String failure = "no result";
        for (int attempt = 0; attempt < 50; attempt++) {
            final QueryResult<R> r = streams.query(request).getPartitionResults().get(partition);
            if (r != null && r.isSuccess()) {
                return r.getResult();
            }
            failure = r == null ? "no result for partition " + partition : r.getFailureReason() + ": " + r.getFailureMessage();
            try {
                Thread.sleep(100);
            } catch (final InterruptedException e) {
                Thread.currentThread().interrupt();
                break;
            }
        }
        throw new IllegalStateException(failure);
    }

    private static JsonNode record(final VersionedRecord<String> r) {
        if (r == null) {
            return JSON.nullNode();
        }
        final ObjectNode o = JSON.createObjectNode();
        o.put("value", r.value());
        o.put("timestamp", r.timestamp());
        if (r.validTo().isPresent()) {
            o.put("validTo", r.validTo().get());
        } else {
            o.putNull("validTo");
        }
        return o;
    }
}

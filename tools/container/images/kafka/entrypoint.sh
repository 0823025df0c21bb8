#!/bin/bash
# Writes server.properties from KAFKA_* variables the way apache/kafka does (KAFKA_FOO_BAR -> foo.bar, __ -> _, ___ -> -),
# formats the log dir with CLUSTER_ID once, then execs the broker in the foreground (SIGTERM stops it cleanly).
set -euo pipefail
props=/opt/kafka/config/server.properties
: > "$props"
skip=' KAFKA_HEAP_OPTS KAFKA_OPTS KAFKA_JVM_PERFORMANCE_OPTS KAFKA_LOG4J_OPTS KAFKA_LOG4J_ROOT_LOGLEVEL KAFKA_JMX_OPTS KAFKA_VERSION '
while IFS='=' read -r name value; do
  case "$skip" in *" $name "*) continue ;; esac
  key="${name#KAFKA_}"
  key="$(printf '%s' "$key" | tr '[:upper:]' '[:lower:]' | sed -e 's/___/-/g' -e 's/__/@/g' -e 's/_/./g' -e 's/@/_/g')"
  printf '%s=%s\n' "$key" "$value" >> "$props"
done < <(env | grep -E '^KAFKA_[A-Z0-9_]+=' || true)
grep -q '^log\.dirs=' "$props" || echo 'log.dirs=/tmp/kraft-combined-logs' >> "$props"
: "${CLUSTER_ID:?CLUSTER_ID is required}"
cp=(-cp '/opt/kafka/libs/*' -Dlog4j2.configurationFile=/opt/kafka/config/log4j2.xml)
java "${cp[@]}" kafka.tools.StorageTool format --ignore-formatted -t "$CLUSTER_ID" -c "$props"
# shellcheck disable=SC2086
exec java ${KAFKA_HEAP_OPTS:--Xmx1g} -XX:+UseG1GC -Djava.awt.headless=true ${KAFKA_OPTS:-} "${cp[@]}" kafka.Kafka "$props"

#!/bin/bash
# Writes a single-node cassandra.yaml from the official image's variables, then execs Cassandra in the foreground.
# Ports follow the official image's mechanism: -Dcassandra.native_transport_port / -Dcassandra.storage_port in JVM_EXTRA_OPTS.
set -euo pipefail
addr="${CASSANDRA_LISTEN_ADDRESS:-127.0.0.1}"
mkdir -p /var/lib/cassandra/{data,commitlog,saved_caches,hints,cdc_raw} /var/lib/cassandra/triggers
cat > /etc/cassandra/cassandra.yaml <<YAML
cluster_name: '${CASSANDRA_CLUSTER_NAME:-Test Cluster}'
num_tokens: ${CASSANDRA_NUM_TOKENS:-16}
partitioner: org.apache.cassandra.dht.Murmur3Partitioner
endpoint_snitch: ${CASSANDRA_ENDPOINT_SNITCH:-SimpleSnitch}
seed_provider:
  - class_name: org.apache.cassandra.locator.SimpleSeedProvider
    parameters:
      - seeds: "${CASSANDRA_SEEDS:-$addr}"
listen_address: $addr
rpc_address: ${CASSANDRA_RPC_ADDRESS:-$addr}
start_native_transport: true
data_file_directories: [/var/lib/cassandra/data]
commitlog_directory: /var/lib/cassandra/commitlog
saved_caches_directory: /var/lib/cassandra/saved_caches
hints_directory: /var/lib/cassandra/hints
cdc_raw_directory: /var/lib/cassandra/cdc_raw
commitlog_sync: periodic
commitlog_sync_period: 10000ms
authenticator: AllowAllAuthenticator
authorizer: AllowAllAuthorizer
storage_compatibility_mode: NONE
YAML
jamm="$(ls /opt/cassandra/lib/jamm-*.jar)"
add_exports=(java.base/jdk.internal.misc java.management.rmi/com.sun.jmx.remote.internal.rmi java.rmi/sun.rmi.registry
  java.rmi/sun.rmi.server java.sql/java.sql java.base/java.lang.ref jdk.unsupported/sun.misc
  jdk.compiler/com.sun.tools.javac.file jdk.attach/sun.tools.attach)
add_opens=(java.base/java.lang.module java.base/jdk.internal.loader java.base/jdk.internal.ref java.base/jdk.internal.reflect
  java.base/jdk.internal.math java.base/jdk.internal.module java.base/jdk.internal.util.jar
  jdk.management/com.sun.management.internal java.base/sun.nio.ch java.base/java.io java.base/java.lang.reflect
  jdk.compiler/com.sun.tools.javac java.base/java.lang java.base/java.util)
flags=(-ea -XX:+UseThreadPriorities -Xss256k -XX:+UseTLAB -XX:+ResizeTLAB -XX:+PerfDisableSharedMem -Djava.net.preferIPv4Stack=true
  -XX:+UseG1GC -XX:+ParallelRefProcEnabled -XX:MaxGCPauseMillis=300 -Djdk.attach.allowAttachSelf=true -XX:+ExitOnOutOfMemoryError
  -Dio.netty.tryReflectionSetAccessible=true -Xms"${MAX_HEAP_SIZE:-1G}" -Xmx"${MAX_HEAP_SIZE:-1G}" -Xmn"${HEAP_NEWSIZE:-200M}")
for p in "${add_exports[@]}"; do flags+=("--add-exports=$p=ALL-UNNAMED"); done
for p in "${add_opens[@]}"; do flags+=("--add-opens=$p=ALL-UNNAMED"); done
# shellcheck disable=SC2086
exec java "${flags[@]}" -javaagent:"$jamm" ${JVM_EXTRA_OPTS:-} \
  -Dcassandra.config=file:///etc/cassandra/cassandra.yaml -Dlogback.configurationFile=file:///etc/cassandra/logback.xml \
  -Dcassandra-foreground=yes -Dcassandra.storagedir=/var/lib/cassandra -Dcassandra.logdir=/var/log/cassandra \
  -Dcassandra.triggers_dir=/var/lib/cassandra/triggers -Dcassandra.skip_wait_for_gossip_to_settle=0 \
  -cp '/opt/cassandra/lib/*' org.apache.cassandra.service.CassandraDaemon

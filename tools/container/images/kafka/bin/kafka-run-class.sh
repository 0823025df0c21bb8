#!/bin/bash
# Runs one Kafka command-line tool class with the tools' classpath (what the Kafka distribution's script of this name does).
exec java -Xmx256m -XX:TieredStopAtLevel=1 -XX:+UseSerialGC -Dlog4j2.level=WARN -cp '/opt/kafka/tools-libs/*' "$@"

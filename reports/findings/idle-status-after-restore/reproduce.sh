#!/bin/sh
# Runs StaleIdle.java on one Flink release: TRIALS runs of each mode, one
# RESULT line per run on stdout; about 12 s per run.
#
#   sh reports/findings/idle-status-after-restore/reproduce.sh FLINK_LIB [TRIALS]
#
# FLINK_LIB is a release's lib folder (flink-dist and the log4j jars), for
# instance pyflink/lib of the apache-flink-libraries wheel:
#   pip download --no-deps apache-flink-libraries==2.3.0 -d /tmp/flink-2.3
#   unzip -q /tmp/flink-2.3/*.whl 'pyflink/lib/*' -d /tmp/flink-2.3
#   sh reports/findings/idle-status-after-restore/reproduce.sh /tmp/flink-2.3/pyflink/lib 5
set -eu
here=$(cd "$(dirname "$0")" && pwd)
lib=$1
trials=${2:-5}
jar() { ls "$lib"/$1 | head -n 1; }
cp="$(jar 'flink-dist-*.jar'):$(jar 'log4j-api-*.jar'):$(jar 'log4j-core-*.jar'):$(jar 'log4j-slf4j-impl-*.jar'):$(jar 'log4j-1.2-api-*.jar')"
classes=$(mktemp -d)
trap 'rm -rf "$classes"' EXIT
javac -nowarn -cp "$cp" -d "$classes" "$here/StaleIdle.java"
for mode in unaligned unaligned-no-idleness aligned-idle-end aligned-idle-end-no-idleness; do
    trial=1
    while [ "$trial" -le "$trials" ]; do
        echo "trial=$trial $(java -cp "$classes:$cp" StaleIdle "$mode" 1000 2>&1 | grep '^RESULT')"
        trial=$((trial + 1))
    done
done

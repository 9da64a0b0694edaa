#!/bin/sh
# Builds and runs this exported ckptsim job on a real Flink MiniCluster.
#
#   sh run.sh            # then: ckptsim flink-check .
#
# Needs a JDK (17 or later) and python3 with pip. Flink's jars come from
# `apache-flink-libraries` on PyPI (a wheel, or for 2.0 and 2.1 a source
# distribution; CKPTSIM_FLINK_VERSION, default below), cached in
# CKPTSIM_FLINK_HOME (default ~/.cache/ckptsim/flink-VERSION).
# Without javac, on Debian or Ubuntu as root, the JDK is installed from the
# distribution's packages (openjdk-17-jdk-headless).
set -eu
here=$(cd "$(dirname "$0")" && pwd)
version=${CKPTSIM_FLINK_VERSION:-2.3.0}
home=${CKPTSIM_FLINK_HOME:-${HOME:-/tmp}/.cache/ckptsim/flink-$version}

# Only what this script and the job made is deleted or written, and never
# through a link: a link planted at any of these paths is refused.
real="$here/real"
for p in "$real" "$real/classes" "$real/store" "$real/checkpoints" \
    "$real/run.json" "$real/rest.jsonl" "$real/crashes.tsv" "$real/flink.log" \
    "$real/watermark-lags.tsv"; do
    if [ -L "$p" ]; then
        echo "run.sh: $p is a symbolic link; remove it (run.sh deletes only what it created)" >&2
        exit 2
    fi
done

if ! command -v javac >/dev/null 2>&1; then
    if command -v apt-get >/dev/null 2>&1 && [ "$(id -u)" = 0 ]; then
        echo "run.sh: installing a JDK (openjdk-17-jdk-headless)" >&2
        apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq openjdk-17-jdk-headless >/dev/null
    else
        echo "run.sh: needs a JDK 17 or later (javac); on Debian: apt-get install openjdk-17-jdk-headless" >&2
        exit 2
    fi
fi

if [ ! -f "$home/lib/flink-dist-$version.jar" ]; then
    echo "run.sh: fetching Flink $version's jars (apache-flink-libraries from PyPI) into $home" >&2
    mkdir -p "$home/wheel" "$home/lib"
    python3 -m pip download --quiet --no-deps --dest "$home/wheel" "apache-flink-libraries==$version"
    python3 - "$home" <<'PY'
import glob, os, sys, tarfile, zipfile
# Newer releases come as a wheel (jars under pyflink/lib/), older ones
# (2.0.x, 2.1.0) as a source distribution (jars under deps/lib/).
home = sys.argv[1]
lib = os.path.join(home, "lib")
wheels = glob.glob(os.path.join(home, "wheel", "apache_flink_libraries-*.whl"))
sdists = glob.glob(os.path.join(home, "wheel", "apache_flink_libraries-*.tar.gz"))
if wheels:
    with zipfile.ZipFile(wheels[0]) as z:
        for name in z.namelist():
            if name.startswith("pyflink/lib/") and name.endswith(".jar"):
                with open(os.path.join(lib, os.path.basename(name)), "wb") as out:
                    out.write(z.read(name))
elif sdists:
    with tarfile.open(sdists[0]) as t:
        for m in t.getmembers():
            if m.isfile() and "/deps/lib/" in m.name and m.name.endswith(".jar"):
                with open(os.path.join(lib, os.path.basename(m.name)), "wb") as out:
                    out.write(t.extractfile(m).read())
else:
    sys.exit("run.sh: pip fetched no apache-flink-libraries wheel or source distribution")
PY
fi

# The classes every export shares are compiled once per content (into
# the Flink home, by a new folder renamed into place); the job's own class
# each time.
set --
for f in "$here"/java/*.java; do
    [ "$(basename "$f")" = CkptsimJob.java ] || set -- "$@" "$f"
done
sum=$(cat "$@" | cksum | cut -d' ' -f1)
cache="$home/classes-$sum"
if [ -L "$cache" ] || { [ -e "$cache" ] && [ ! -d "$cache" ]; }; then
    echo "run.sh: $cache is not a folder run.sh made; remove it" >&2
    exit 2
fi
if [ ! -d "$cache" ]; then
    tmp=$(mktemp -d "$home/classes-new.XXXXXX")
    javac -nowarn -d "$tmp" -cp "$home/lib/*" "$@"
    # Another run may have made it meanwhile: then this copy goes.
    if [ -d "$cache" ]; then rm -rf "$tmp"; else mv "$tmp" "$cache"; fi
fi
classes="$real/classes"
rm -rf "$classes"
mkdir -p "$classes"
javac -nowarn -d "$classes" -cp "$cache:$home/lib/*" "$here/java/CkptsimJob.java"
rm -rf "$real/store" "$real/checkpoints"
# Every task manager's network buffers are direct memory.
exec java -Xmx1g -XX:MaxDirectMemorySize=${CKPTSIM_FLINK_DIRECT_MEMORY:-2g} -XX:+UseSerialGC \
    -Dckptsim.out="$here" -Dlog4j.configurationFile="$here/log4j2.properties" \
    -cp "$classes:$cache:$home/lib/*" CkptsimJob "$here"

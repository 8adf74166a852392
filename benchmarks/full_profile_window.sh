#!/usr/bin/env bash
# One device window's share of the full-profile report (issue #40, item 2), end to end.
#
#   bash benchmarks/full_profile_window.sh [BUDGET_SECONDS] [SEEDS] [JOBS] [CHAPTERS]
#
# defaults: 780 s, seeds 0-4, 4 runs side by side (the machine's cores shared among them), every chapter.  Run it
# from the repository's root on the device machine, with the Jupyter stack importable (see the docstring of
# benchmarks/full_profile_on_device.py for a machine without internet).  It copies the committed full-profile report
# (robustness/report-full.json, if there is one) into "${OUT:-window}/robustness", then runs
#   python -m companion robustness --profile full --missing --budget BUDGET
# into that folder: only the chapter × seed runs the committed report lacks for the current code run, slowest
# chapter first, none starts after BUDGET seconds, and the report is written after every finished run, so a window
# that ends early keeps what it measured.  Back on the development machine, merge the window into the committed
# report and commit it:
#   python -m companion robustness --profile full --merge <that folder>/robustness
#   git add robustness/report-full.json
#
# A chapter whose full profile is longer than a window (chapter 7, chapter 13's two parts on a shared GPU) goes on in
# the next one from its results cache, which lives on the device machine and goes back with it.  So the script
#  - stops the sweep after STOP_AFTER seconds (environment; default: no stop), leaving time for what follows;
#  - then packs the results cache's entries written (or unpacked) in this window into "${OUT:-window}/cache.tar.gz"
#    (in parts of 15 MiB, cache.tar.gz.part-aa …, when it is larger; at most 5 parts, else it says so and packs
#    nothing), every finished cached computation of the window — a finished depth of chapter 13's fit-speed
#    models, a finished grid of its first part, a finished width of chapter 7's nets — and never one cut off (the
#    cache keeps only finished calls);
#  - starts by unpacking an earlier window's cache from CACHE_IN (environment; default .window/cache.tar.gz or its
#    parts, if there): copy the files that came back into .window/ (git ignores it) and name .window in the
#    device tool's carry.  The cache is keyed by the torch version and the code's digest, so only the same code on
#    the same torch reads it.
#
# example, one window of 15 minutes (about 9 of them for the command):
#   OUT=$OUT STOP_AFTER=500 bash benchmarks/full_profile_window.sh 400 0-4 2 ch07_
set -euo pipefail
budget=${1:-780}
seeds=${2:-0-4}
jobs=${3:-4}
chapters=${4:-}
mkdir -p "${OUT:-window}/robustness"
window=$(cd "${OUT:-window}" && pwd)
out="$window/robustness"
if [ -f robustness/report-full.json ]; then
    cp robustness/report-full.json "$out/"
fi
cache=$(python3 -c "from companion.kit.cache import cache_location as c; print(c() or '')")
cache_in=${CACHE_IN:-.window/cache.tar.gz}
marker=$(mktemp)  # what is newer than this (written, or unpacked with -m) is the window's to pack
trap 'rm -f "$marker"' EXIT
if [ -n "$cache" ]; then
    mkdir -p "$cache"
    sleep 1  # a file written in the marker's second would not be newer than it
    if [ -f "$cache_in" ]; then
        tar -xzmf "$cache_in" -C "$cache" && echo "unpacked an earlier window's cache: $cache_in"
    elif compgen -G "$cache_in.part-*" > /dev/null; then
        cat "$cache_in".part-* | tar -xzm -C "$cache" && echo "unpacked an earlier window's cache: $cache_in.part-*"
    fi
fi
cores=$(python3 -c "import os; print(os.cpu_count() or 1)")
export COMPANION_THREADS=${COMPANION_THREADS:-$(( cores / jobs > 0 ? cores / jobs : 1 ))}
export PYTHONUNBUFFERED=1
# a cell may run as long as it needs (the full profile's cells run for minutes to hours on a CPU); the budget and
# STOP_AFTER bound the window
args=(--profile full --seeds "$seeds" --jobs "$jobs" --missing --budget "$budget" --timeout 86400 --out "$out")
if [ -n "$chapters" ]; then
    args+=(--chapters "$chapters")
fi
stop=()
if [ -n "${STOP_AFTER:-}" ]; then
    stop=(timeout -s INT "$STOP_AFTER")
fi
# exit status 1 only says that the report does not (yet) meet the standard, 124/130 that STOP_AFTER stopped it:
# the window's share is still written
status=0
${stop[@]+"${stop[@]}"} python3 -m companion robustness "${args[@]}" || status=$?
case $status in 0|1|124|130) ;; *) echo "the sweep ended with status $status"; exit "$status" ;; esac
echo "window report: $out/report-full.json"
if [ -n "$cache" ] && [ -d "$cache" ]; then
    (cd "$cache" && find . -type f -newer "$marker" -print0 | tar -czf "$window/cache.tar.gz" --null -T -)
    size=$(stat -c %s "$window/cache.tar.gz")
    limit=$(( 15 * 1024 * 1024 ))
    if [ "$size" -gt "$limit" ]; then
        if [ "$size" -gt $(( 5 * limit )) ]; then
            echo "the cache packs to $size bytes, more than 5 parts of 15 MiB: not packed (it stays on this machine)"
            rm "$window/cache.tar.gz"
        else
            split -b "$limit" "$window/cache.tar.gz" "$window/cache.tar.gz.part-"
            rm "$window/cache.tar.gz"
            echo "window cache: $window/cache.tar.gz.part-* ($size bytes)"
        fi
    else
        echo "window cache: $window/cache.tar.gz ($size bytes)"
    fi
fi

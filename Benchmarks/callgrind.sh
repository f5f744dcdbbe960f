#!/usr/bin/env bash
# Instructions per set under valgrind's callgrind, for every column of the single-threaded
# workloads: unlike times, these counts repeat exactly on a loaded machine. Each count is
# (instructions with ITERATIONS sets - instructions with 0 sets) / ITERATIONS.
#
# Usage: Benchmarks/callgrind.sh [WORKLOAD...]   (default: fan-out, old-new, churn, bindings)
set -euo pipefail
cd "$(dirname "$0")"

swift build -c release --package-path . >/dev/null
binary="$(swift build -c release --package-path . --show-bin-path)/benchmarks"
scratch="$(mktemp -d)"
trap 'rm -rf "$scratch"' EXIT
# valgrind 3.19 cannot read the DWARF this toolchain writes; the symbol table is enough.
cp "$binary" "$scratch/benchmarks"
strip --strip-debug "$scratch/benchmarks"

instructions() {
  valgrind --tool=callgrind --callgrind-out-file="$scratch/out" \
    "$scratch/benchmarks" --profile "$1" "$2" "$3" 2>&1 |
    sed -n 's/.*Collected : //p' | tr -d ,
}

columns_for() {
  case "$1" in
    fanout-*) echo "closure loop|weak-owner floor|OpenCombine|addObserver|observe (token)" ;;
    oldnew-*) echo "closure loop|weak-owner floor|addObserver|observe (token)" ;;
    churn) echo "closure loop|weak-owner floor|OpenCombine|addObserver|observe (token)" ;;
    chain | keypath | flatmap)
      echo "hand-written closure|hand-written, key-path write|library binding|OpenCombine"
      ;;
  esac
}

iterations_for() {
  case "$1" in
    fanout-* | oldnew-*) echo $((200000 / ${1#*-})) ;;
    churn) echo 2000 ;;
    *) echo 50000 ;;
  esac
}

workloads=("$@")
if [ ${#workloads[@]} -eq 0 ]; then
  workloads=(fanout-1 fanout-10 fanout-100 fanout-1000 oldnew-100 churn chain keypath)
fi

echo "| workload | column | instructions per set |"
echo "|---|---|---:|"
for workload in "${workloads[@]}"; do
  iterations="$(iterations_for "$workload")"
  IFS='|' read -r -a columns <<<"$(columns_for "$workload")"
  for column in "${columns[@]}"; do
    with="$(instructions "$workload" "$column" "$iterations")"
    without="$(instructions "$workload" "$column" 0)"
    echo "| $workload | $column | $(((with - without) / iterations)) |"
  done
done

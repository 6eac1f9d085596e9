#!/usr/bin/env bash
# Builds and runs the benchmark suite (CMake preset `bench`: g++ -O3
# -march=native), writes benchmark/results/latest.json, then regenerates
# docs/benchmarks.md and its plots with Debian's python3 (matplotlib).
# Extra arguments go to the benchmark binary (e.g. --benchmark_filter=book).
# Single-threaded everywhere; OPENBLAS_CORETYPE and OPENBLAS_L2_SIZE are
# removed from the environment so every BLAS-backed peer runs its default.
# Repetitions of all benchmarks are run in random interleaved order, so that
# the machine's drifting load spreads over every implementation alike instead
# of favouring whichever ran in a quiet minute (the ratios are what is read).
set -euo pipefail
cd "$(dirname "$0")/.."
cmake --preset bench
cmake --build --preset bench -j"$(nproc)"
mkdir -p benchmark/results
env -u OPENBLAS_CORETYPE -u OPENBLAS_L2_SIZE OPENBLAS_NUM_THREADS=1 OMP_NUM_THREADS=1 \
  build/bench/benchmark/mha_bench \
  --benchmark_enable_random_interleaving=true \
  --benchmark_out=benchmark/results/latest.json --benchmark_out_format=json "$@"
/usr/bin/python3 tools/plot_benchmarks.py benchmark/results/latest.json

#!/bin/sh
# count_instructions.sh -- counts the instructions a bare-metal test program
# executes under QEMU in each of its count regions (mha_bm::count_region,
# mha_baremetal.hpp): the instructions between the return from
# mha_bm_count_begin and the call of mha_bm_count_end, a few of which are the
# caller's glue around the measured call. These are QEMU's executed guest
# instructions, not cycles: no pipeline, cache, memory wait-state or MVE beat
# timing is modelled.
#
# Usage: count_instructions.sh --machine MACHINE [--by-function N] PROGRAM.elf
#   MACHINE        the qemu-system-arm machine (mps2-an385, mps2-an386, mps2-an500,
#                  mps3-an547)
#   --by-function N  also print the N functions that executed the most
#                  instructions in each region
# Prints one line per region, "<count>  <region name>", and exits with the
# program's exit status (non-zero when QEMU or the program failed).
#
# How: QEMU 7.2 runs the program with one guest instruction per translation
# block (-singlestep) and without block chaining (-d nochain), so its exec log
# (-d exec) has one "Trace ..." line, ending in the symbol of the instruction's
# function, per executed instruction. The log goes through a FIFO to awk; the
# region names come from the program's semihosting output ("count region:
# NAME", in the order of the regions).
set -eu

machine=
by_function=0
while [ $# -gt 1 ]; do
  case $1 in
    --machine) machine=$2; shift 2 ;;
    --by-function) by_function=$2; shift 2 ;;
    *) break ;;
  esac
done
if [ $# -ne 1 ] || [ -z "$machine" ]; then
  echo "usage: $0 --machine MACHINE [--by-function N] PROGRAM.elf" >&2
  exit 2
fi
program=$1
qemu=${QEMU:-qemu-system-arm}

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
mkfifo "$tmp/log"

# Regions: count lines after the begin marker's last instruction up to the
# end marker's first.
LC_ALL=C awk -v top="$by_function" '
  /^Trace / {
    sym = $0
    sub(/^[^]]*\] ?/, "", sym)
    if (sym == "mha_bm_count_begin") { in_begin = 1; next }
    if (in_begin) { in_begin = 0; counting = 1; n = 0; delete per }
    if (sym == "mha_bm_count_end") {
      if (counting) {
        region++
        print "region", region, n
        if (top > 0) {
          for (k = 0; k < top; k++) {
            best = ""; bn = -1
            for (s in per) if (per[s] > bn) { bn = per[s]; best = s }
            if (bn <= 0) break
            print "function", region, bn, best
            per[best] = 0
          }
        }
      }
      counting = 0
      next
    }
    if (counting) { n++; if (top > 0) per[sym == "" ? "?" : sym]++ }
  }' "$tmp/log" > "$tmp/counts" &
awk_pid=$!

status=0
"$qemu" -machine "$machine" -nographic -monitor none -serial none \
  -semihosting-config enable=on,target=native -singlestep -d exec,nochain -D "$tmp/log" \
  -kernel "$program" > "$tmp/out" 2>&1 || status=$?
wait "$awk_pid"

grep '^count region: ' "$tmp/out" | sed 's/^count region: //' > "$tmp/names" || true
echo "# $(basename "$program") on $machine: QEMU instruction counts (not cycles)"
awk '
  FNR == NR { name[FNR] = $0; next }
  $1 == "region" { printf "%12d  %s\n", $3, ($2 in name ? name[$2] : "region " $2) }
  $1 == "function" { f = $0; sub(/^function [0-9]+ [0-9]+ /, "", f); printf "%12s    %d  %s\n", "", $3, f }
' "$tmp/names" "$tmp/counts" > "$tmp/report"
# (function names demangled where c++filt is there, and cut to one line)
if command -v c++filt > /dev/null 2>&1; then
  c++filt < "$tmp/report" | cut -c1-150
else
  cut -c1-150 < "$tmp/report"
fi
if [ "$status" -ne 0 ]; then
  echo "$0: $program exited with status $status; its output:" >&2
  cat "$tmp/out" >&2
fi
exit "$status"

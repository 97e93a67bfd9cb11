#!/bin/bash
# Re-measure every testbed dataset (testbed-click, click-course, testbed-bmv2, testbed-veth,
# comparison) in one run: about an hour and a half on 2 cores with the machine to itself
# (on 2026-11-26 at code c3e008e, idle CPUs polling: the four others 42 minutes, of
# which testbed-veth 27; the comparison 43).
# Name some datasets after OUT to measure only
# those: scripts/remeasure-testbed.sh runs/remeasure testbed-veth (it needs Click only).
# Needs root and the engines built (make engines). Writes to OUT (default runs/remeasure),
# never to datasets/: copy each folder there unchanged, then rewrite its README and
# tests/test_readme_<dataset>.py from the new files.
#
# Give the machine to this run alone: no tests, notebooks or other sessions meanwhile.
# Another task's share of the router's CPU costs the router packets, and trial validation
# cannot see it (docs/testbed.md, "Other work on the machine spoils a run unseen").
set -u
cd "$(dirname "$0")/.."
R=${ROUTERLAB:-.venv/bin/routerlab}
O=$(realpath -m "${1:-runs/remeasure}")
shift
ALL="testbed-click click-course testbed-bmv2 testbed-veth comparison"
WANT=" ${*:-$ALL} "
for d in $WANT; do
  case " $ALL " in *" $d "*) ;; *) echo "unknown dataset: $d (one of: $ALL)" >&2; exit 2;; esac
done
want() { [[ "$WANT" == *" $1 "* ]]; }
mkdir -p "$O"
echo "routerlab $(.venv/bin/python -c 'from routerlab import datasets; print(datasets.code_version())') start $(date -u +%FT%TZ) out $O datasets$WANT"
C=$(.venv/bin/python -c "from routerlab import measuring; print(f'{measuring.generator_ceiling():.0f}')")
[[ "$C" =~ ^[0-9]+$ ]] || { echo "the generator's ceiling could not be measured (got '$C')" >&2; exit 1; }
echo "ceiling $C at $(date -u +%FT%TZ)"
F=0.05,0.1,0.15,0.2,0.3,0.4,0.5,0.6,0.8,1.0
if want testbed-click; then
K=$O/testbed-click
$R bench engines --engine linux --engine ebpf --engine click --engine fastclick --engine fastclick-dpdk --duration 1 --out "$K"
for e in fastclick fastclick-dpdk; do
  $R measure --engine $e --scenario single-flow --loads-frac $F --ceiling "$C" --runs 10 --duration 1 --out "$K"
done
echo "testbed-click done $(date -u +%FT%TZ)"
fi
if want click-course; then
CC=$O/click-course
F2=0.05,0.1,0.2,0.3,0.4,0.5,0.6,0.8,1.0
$R measure --engine click --config routers/exercises/iprouter/solution/iprouter.click --experiment your-router \
  --scenario single-flow --loads-frac $F2 --ceiling "$C" --runs 5 --duration 1 --out "$CC"
$R measure --engine click --experiment click-reference --ceiling "$C" --scenario single-flow --loads-frac $F2 --runs 5 --duration 1 --out "$CC"
$R measure --engine linux --experiment linux-kernel --ceiling "$C" --scenario single-flow --loads-frac $F2 --runs 5 --duration 1 --out "$CC"
echo "click-course done $(date -u +%FT%TZ)"
fi
if want testbed-bmv2; then
B=$O/testbed-bmv2
$R measure --engine bmv2 --scenario single-flow --loads 1000,2000,3000,5000,7500,10000,15000,20000,30000,40000 --runs 10 --duration 1 --out "$B"
$R bench engines --engine linux --engine bmv2 --duration 1 --out "$B"
echo "testbed-bmv2 done $(date -u +%FT%TZ)"
fi
if want testbed-veth; then
V=$O/testbed-veth
PATHS=("linux single-flow" "nft single-flow-fw0" "nft single-flow-fw5" "nft single-flow-fw50" "ebpf single-flow" "ebpf single-flow-fw50")
for es in "${PATHS[@]}"; do
  set -- $es
  $R measure --engine "$1" --scenario "$2" --loads-frac $F --ceiling "$C" --runs 10 --duration 1 --out "$V"
done
$R measure --engine click --loads 5000,10000,20000,30000,40000,50000,60000,80000,100000,150000,200000,250000,300000,400000 \
  --ceiling "$C" --runs 10 --duration 1 --out "$V"
for es in "${PATHS[@]}"; do
  set -- $es
  $R measure --engine "$1" --scenario "$2" --search both --duration 1 --ceiling "$C" --out "$V"
done
$R bench search --duration 1 --out "$V"
$R bench engines --duration 1 --out "$V"
echo "testbed-veth done $(date -u +%FT%TZ)"
fi
if want comparison; then
$R compare --out "$O/comparison" --ceiling "$C"
echo "comparison done $(date -u +%FT%TZ)"
fi

#!/bin/sh
# Open vSwitch's userspace datapath as a router on routerlab's testbed, for the exec engine:
#
#   routerlab measure --engine exec \
#       --start 'sh "$ROUTERS/ovs/ovs-router.sh" start' \
#       --stop 'sh "$ROUTERS/ovs/ovs-router.sh" stop' \
#       --counters 'sh "$ROUTERS/ovs/ovs-router.sh" counters' \
#       --version-command 'ovs-vswitchd --version' ...
#
# Needs Debian's openvswitch-switch (no kernel module: the bridge's datapath is netdev,
# the ports read and write their veths through AF_PACKET sockets). Its database, sockets
# and logs live in $RUN_DIR, so nothing touches a system-wide Open vSwitch.
#
# Routing is an OpenFlow rule: a packet from IN_DEV to DEST_NET gets OUT_DEV's and the next
# hop's MAC addresses and its TTL decremented (dec_ttl drops an expired one, as a router
# does), and leaves by OUT_DEV; anything else is dropped by the lowest-priority rule, whose
# count is the "unrouted" counter.
set -eu
: "${RUN_DIR:?run me from routerlab measure --engine exec (RUN_DIR is not set)}"
export OVS_RUNDIR="$RUN_DIR" OVS_LOGDIR="$RUN_DIR" OVS_DBDIR="$RUN_DIR" OVS_SYSCONFDIR="$RUN_DIR"
DB="unix:$RUN_DIR/db.sock"
vsctl() { ovs-vsctl --db="$DB" --timeout=10 "$@"; }
ofctl() { ovs-ofctl --timeout=10 "$@"; }

case "${1:-}" in
start)
    ovsdb-tool create "$RUN_DIR/conf.db" /usr/share/openvswitch/vswitch.ovsschema
    # both daemons stay children of this script (no --detach): stopping its process group
    # stops them
    ovsdb-server "$RUN_DIR/conf.db" --remote="punix:$RUN_DIR/db.sock" \
        --unixctl="$RUN_DIR/ovsdb-server.ctl" --log-file="$RUN_DIR/ovsdb-server.log" &
    db=$!
    for _ in $(seq 100); do [ -S "$RUN_DIR/db.sock" ] && break; sleep 0.05; done
    [ -S "$RUN_DIR/db.sock" ] || { echo "ovs-router: ovsdb-server made no socket in 5 s" >&2; exit 1; }
    vsctl --no-wait init
    ovs-vswitchd "$DB" --unixctl="$RUN_DIR/ovs-vswitchd.ctl" --log-file="$RUN_DIR/ovs-vswitchd.log" &
    vs=$!
    vsctl add-br br0 -- set bridge br0 datapath_type=netdev fail_mode=secure \
        -- add-port br0 "$IN_DEV" -- add-port br0 "$OUT_DEV"
    ofctl del-flows br0
    ofctl add-flow br0 "priority=100,in_port=$IN_DEV,ip,nw_dst=$DEST_NET,actions=mod_dl_src:$OUT_MAC,mod_dl_dst:$NEXT_MAC,dec_ttl,output:$OUT_DEV"
    ofctl add-flow br0 "priority=0,actions=drop"
    echo "ovs-router: br0 routes $DEST_NET from $IN_DEV to $NEXT_MAC on $OUT_DEV"
    # the router is down when either daemon is: end, so that routerlab stops measuring
    while kill -0 "$db" 2>/dev/null && kill -0 "$vs" 2>/dev/null; do sleep 0.5; done
    echo "ovs-router: a daemon exited; the last lines of its log:" >&2
    tail -n 3 "$RUN_DIR/ovs-vswitchd.log" "$RUN_DIR/ovsdb-server.log" >&2
    exit 1
    ;;
stop)
    ovs-appctl -t "$RUN_DIR/ovs-vswitchd.ctl" exit || true
    ovs-appctl -t "$RUN_DIR/ovsdb-server.ctl" exit || true
    ;;
counters)
    # each port's drops by Open vSwitch's count (in, out and the bridge's own port, local),
    # and the packets no routing rule took
    # read first, so that a failure of ovs-ofctl fails this command (sh has no pipefail)
    ports=$(ofctl --names dump-ports br0)
    flows=$(ofctl dump-flows br0)
    printf '%s\n' "$ports" | awk -v in_dev="$IN_DEV" -v out_dev="$OUT_DEV" '
        /port/ { p = $2; sub(/:$/, "", p); gsub(/"/, "", p)
                 p = (p == in_dev) ? "in" : (p == out_dev) ? "out" : (p == "LOCAL") ? "local" : p }
        /pkts=/ { dir = ($1 == "tx") ? "tx" : "rx"
                  for (i = 1; i <= NF; i++) if ($i ~ /^drop=[0-9]/) { split($i, a, "="); sub(/,$/, "", a[2]); print p "_" dir "_dropped", a[2] } }'
    printf '%s\n' "$flows" | sed -n 's/.* n_packets=\([0-9]*\),.* priority=0 actions=drop$/unrouted \1/p'
    ;;
*)
    echo "usage: $0 start|stop|counters (with routerlab's variables set)" >&2
    exit 2
    ;;
esac

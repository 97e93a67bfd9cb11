/* shortcut.p4 -- fast reroute with ShortCut, all in the data plane (P4_16, v1model).
 *
 * SKELETON: fill in the TODOs (the task: p4/shortcut/README.md).
 *
 * Every destination prefix has a primary and a backup next hop (table routes). The
 * register choice holds, per destination, which one is in use: 0 primary, 1 backup,
 * 2 none left (drop until the control plane rewrites the routes and resets choice).
 *
 * - Fast reroute: the control plane's link monitor sets port_down[p] when port p fails;
 *   a destination whose next hop sits behind a failed port moves to its next alternative.
 * - ShortCut ("Shortcutting Fast Failover Routes in the Data Plane"): a packet for D that
 *   arrives from the port of D's current next hop has come back through a loop, so that
 *   next hop is bad: the router marks it in choice and uses the next alternative at once,
 *   for this packet and every later one. */
#include "common.p4"   /* p4/include: routerlab p4 build passes -I */

const bit<32> DROP_NOT_IPV4 = 0;
const bit<32> DROP_TTL      = 1;
const bit<32> DROP_NO_ROUTE = 2;
const bit<32> DROP_NO_ALTERNATIVE = 3;

/* indices of the switched counter */
const bit<32> SWITCH_LINK_DOWN = 0;
const bit<32> SWITCH_LOOP      = 1;

const bit<32> MAX_DESTINATIONS = 1024;

control RlIngress(inout headers hdr, inout metadata meta,
                  inout standard_metadata_t standard_metadata) {
    counter(16, CounterType.packets) rx_port;
    counter(4, CounterType.packets) dropped;
    counter(2, CounterType.packets) switched;
    register<bit<1>>(16) port_down;
    register<bit<2>>(MAX_DESTINATIONS) choice;

    bit<32> dest = 0;
    port_t  port1 = 0;
    mac_t   mac1 = 0;
    port_t  port2 = 0;
    mac_t   mac2 = 0;

    action drop() {
        mark_to_drop(standard_metadata);
    }

    action no_route() {
        dropped.count(DROP_NO_ROUTE);
        mark_to_drop(standard_metadata);
    }

    /* destination index d (into choice), primary and backup next hops */
    action set_routes(bit<32> d, port_t p1, mac_t m1, port_t p2, mac_t m2) {
        dest = d;
        port1 = p1;
        mac1 = m1;
        port2 = p2;
        mac2 = m2;
    }

    table routes {
        key = { hdr.ipv4.dstAddr: lpm; }
        actions = { set_routes; no_route; }
        size = MAX_DESTINATIONS;
        default_action = no_route();
    }

    /* our MAC on each port */
    action set_src(mac_t src) {
        hdr.ethernet.src = src;
    }

    table port_mac {
        key = { standard_metadata.egress_spec: exact; }
        actions = { set_src; NoAction; }
        size = 16;
        default_action = NoAction();
    }

    apply {
        rx_port.count((bit<32>)standard_metadata.ingress_port);
        if (!hdr.ipv4.isValid() || standard_metadata.checksum_error == 1) {
            dropped.count(DROP_NOT_IPV4);
            drop();
            return;
        }
        if (hdr.ipv4.ttl <= 1) {
            dropped.count(DROP_TTL);
            drop();
            return;
        }
        if (!routes.apply().hit) {          /* no_route has dropped it */
            return;
        }

        bit<2> c;
        bit<1> down;
        choice.read(c, dest);
        /* TODO 1 (ShortCut): if the packet arrived from the port of the next hop in use
         * (port1 while c is 0, port2 while c is 1), move on to the next alternative and
         * count SWITCH_LOOP */
        /* TODO 2 (fast reroute): while the next hop in use sits behind a port that is
         * down (register port_down), move on to the next alternative and count
         * SWITCH_LINK_DOWN */

        /* TODO 3: remember the choice for this destination's later packets */

        if (c == 0) {
            standard_metadata.egress_spec = port1;
            hdr.ethernet.dst = mac1;
        } else if (c == 1) {
            standard_metadata.egress_spec = port2;
            hdr.ethernet.dst = mac2;
        } else {
            dropped.count(DROP_NO_ALTERNATIVE);
            drop();
            return;
        }
        hdr.ipv4.ttl = hdr.ipv4.ttl - 1;
        port_mac.apply();
    }
}

V1Switch(RlParser(), RlVerifyChecksum(), RlIngress(), RlEgress(), RlComputeChecksum(),
         RlDeparser()) main;

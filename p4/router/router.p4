/* router.p4 -- an IPv4 router for bmv2's simple_switch (P4_16, v1model).
 *
 * SKELETON: fill in the TODOs (the task: p4/router/README.md).
 *
 * Header checks (IPv4, checksum, TTL), longest-prefix-match route lookup, TTL decrement
 * with checksum update (in RlComputeChecksum), next-hop MAC rewrite, drop on miss.
 * Counters: packets received per port (rx_port), dropped per reason (dropped), sent per
 * port (tx_port, in RlEgress). Entries: routerlab.engines.p4.scenario_entries(), from the scenario. */
#include "common.p4"   /* p4/include: routerlab p4 build passes -I */

/* indices of the dropped counter */
const bit<32> DROP_NOT_IPV4 = 0;
const bit<32> DROP_TTL      = 1;
const bit<32> DROP_NO_ROUTE = 2;
const bit<32> DROP_FIREWALL = 3;

control RlIngress(inout headers hdr, inout metadata meta,
                  inout standard_metadata_t standard_metadata) {
    counter(16, CounterType.packets) rx_port;
    counter(4, CounterType.packets) dropped;

    action drop() {
        mark_to_drop(standard_metadata);
    }

    action no_route() {
        dropped.count(DROP_NO_ROUTE);
        mark_to_drop(standard_metadata);
    }

    /* forward to a next hop: our MAC on that port, the next hop's MAC, the port */
    action forward(mac_t src, mac_t dst, port_t port) {
        /* TODO 1: rewrite the Ethernet source (our MAC on that port) and destination
         * (the next hop's MAC), set the egress port, decrement the TTL */
    }

    table ipv4_lpm {
        /* TODO 2: match the destination address by longest prefix; room for 1048576 routes */
        actions = { forward; no_route; }
        default_action = no_route();
    }

    apply {
        rx_port.count((bit<32>)standard_metadata.ingress_port);
        if (!hdr.ipv4.isValid() || standard_metadata.checksum_error == 1) {
            dropped.count(DROP_NOT_IPV4);
            drop();
            return;
        }
        /* TODO 3: a packet whose TTL would reach 0 is dropped (count it as DROP_TTL);
         * every other packet goes through ipv4_lpm */
    }
}

V1Switch(RlParser(), RlVerifyChecksum(), RlIngress(), RlEgress(), RlComputeChecksum(),
         RlDeparser()) main;

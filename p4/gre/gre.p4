/* gre.p4 -- the firewall router of firewall.p4, GRE-encapsulating towards the far end
 *
 * SKELETON: fill in the TODOs (the task: p4/gre/README.md).
 * (P4_16, v1model).
 *
 * After the route lookup, the tunnel table (keyed by egress port) may encapsulate: a new
 * outer IPv4 header (protocol 47) and a 4-byte GRE header (RFC 2784, no options) go in
 * front of the routed packet. An empty tunnel table leaves packets as they are. */
#include "common.p4"   /* p4/include: routerlab p4 build passes -I */

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

    action acl_allow() { }

    action acl_deny() {
        dropped.count(DROP_FIREWALL);
        mark_to_drop(standard_metadata);
    }

    table acl {
        key = {
            hdr.ipv4.srcAddr:  ternary;
            hdr.ipv4.dstAddr:  ternary;
            hdr.ipv4.protocol: ternary;
            meta.dstPort:      range;
        }
        actions = { acl_allow; acl_deny; }
        size = 1024;
        default_action = acl_allow();
    }

    action no_route() {
        dropped.count(DROP_NO_ROUTE);
        mark_to_drop(standard_metadata);
    }

    action forward(mac_t src, mac_t dst, port_t port) {
        hdr.ethernet.src = src;
        hdr.ethernet.dst = dst;
        standard_metadata.egress_spec = port;
        hdr.ipv4.ttl = hdr.ipv4.ttl - 1;
    }

    table ipv4_lpm {
        key = { hdr.ipv4.dstAddr: lpm; }
        actions = { forward; no_route; }
        size = 1048576;
        default_action = no_route();
    }

    /* encapsulate: outer header from src to dst, GRE carrying IPv4 */
    action gre_encap(ip4_t src, ip4_t dst) {
        /* TODO 1: make hdr.outer_ipv4 valid and fill it in: version 4, no options, TTL
         * 64, protocol GRE, from src to dst, total length = the inner packet's + 24 */
        /* TODO 2: make hdr.gre valid: no flags, version 0, carrying IPv4 (0x0800) */
    }

    table tunnel {
        key = { standard_metadata.egress_spec: exact; }
        actions = { gre_encap; NoAction; }
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
        switch (acl.apply().action_run) {
            acl_deny: { return; }
        }
        if (hdr.ipv4.ttl <= 1) {
            dropped.count(DROP_TTL);
            drop();
            return;
        }
        /* TODO 3: route the packet; if it was forwarded (a hit), apply the tunnel table */
        ipv4_lpm.apply();
    }
}

V1Switch(RlParser(), RlVerifyChecksum(), RlIngress(), RlEgress(), RlComputeChecksum(),
         RlDeparser()) main;

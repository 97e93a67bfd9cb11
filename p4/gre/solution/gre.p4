/* gre.p4 -- the firewall router of firewall.p4, GRE-encapsulating towards the far end
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
        hdr.outer_ipv4.setValid();
        hdr.outer_ipv4.version = 4;
        hdr.outer_ipv4.ihl = 5;
        hdr.outer_ipv4.diffserv = 0;
        hdr.outer_ipv4.totalLen = hdr.ipv4.totalLen + 24;   /* 20 outer + 4 GRE */
        hdr.outer_ipv4.identification = 0;
        hdr.outer_ipv4.flags = 0;
        hdr.outer_ipv4.fragOffset = 0;
        hdr.outer_ipv4.ttl = 64;
        hdr.outer_ipv4.protocol = PROTO_GRE;
        hdr.outer_ipv4.srcAddr = src;
        hdr.outer_ipv4.dstAddr = dst;
        hdr.gre.setValid();
        hdr.gre.flagsVersion = 0;
        hdr.gre.protocol = ETHERTYPE_IPV4;
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
        if (ipv4_lpm.apply().hit) {         /* a miss is no_route: dropped */
            tunnel.apply();
        }
    }
}

V1Switch(RlParser(), RlVerifyChecksum(), RlIngress(), RlEgress(), RlComputeChecksum(),
         RlDeparser()) main;

/* firewall.p4 -- the IPv4 router of router.p4 behind an ACL (P4_16, v1model).
 *
 * SKELETON: fill in the TODOs (the task: p4/firewall/README.md).
 *
 * The ACL matches source and destination prefix and protocol (ternary) and the UDP/TCP
 * destination port (range); the highest-priority matching entry decides, the default
 * action is the policy (acl_allow or acl_deny, set by the control plane). The 50% drop
 * scenario is an ACL whose allow entries cover the traffic that should pass. */
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
        /* TODO 1: match source and destination address and protocol (ternary) and
         * meta.dstPort (range); room for 1024 rules */
        actions = { acl_allow; acl_deny; }
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

    apply {
        rx_port.count((bit<32>)standard_metadata.ingress_port);
        if (!hdr.ipv4.isValid() || standard_metadata.checksum_error == 1) {
            dropped.count(DROP_NOT_IPV4);
            drop();
            return;
        }
        /* TODO 2: apply acl; a denied packet goes no further */
        if (hdr.ipv4.ttl <= 1) {
            dropped.count(DROP_TTL);
            drop();
            return;
        }
        ipv4_lpm.apply();
    }
}

V1Switch(RlParser(), RlVerifyChecksum(), RlIngress(), RlEgress(), RlComputeChecksum(),
         RlDeparser()) main;

/* common.p4 -- parser, checksums and deparser shared by every routerlab P4 program
 * (v1model). A program includes this and defines only its ingress and egress. */
#ifndef ROUTERLAB_COMMON_P4
#define ROUTERLAB_COMMON_P4

#include <core.p4>
#include <v1model.p4>
#include "headers.p4"

/*************************************************************************
*********************** P A R S E R  ***********************************
*************************************************************************/

parser RlParser(packet_in packet, out headers hdr, inout metadata meta,
                inout standard_metadata_t standard_metadata) {
    state start {
        meta.dstPort = 0;
        packet.extract(hdr.ethernet);
        transition select(hdr.ethernet.etherType) {
            ETHERTYPE_IPV4: parse_ipv4;
            default: accept;
        }
    }
    state parse_ipv4 {
        packet.extract(hdr.ipv4);
        /* ports only in the first fragment of an option-less header */
        transition select(hdr.ipv4.ihl, hdr.ipv4.fragOffset, hdr.ipv4.protocol) {
            (5, 0, PROTO_UDP): parse_ports;
            (5, 0, PROTO_TCP): parse_ports;
            default: accept;
        }
    }
    state parse_ports {
        packet.extract(hdr.ports);
        meta.dstPort = hdr.ports.dstPort;
        transition accept;
    }
}

/*************************************************************************
************   C H E C K S U M    V E R I F I C A T I O N   *************
*************************************************************************/

control RlVerifyChecksum(inout headers hdr, inout metadata meta) {
    /* a router drops corrupt headers: bmv2 sets standard_metadata.checksum_error,
     * which the ingress checks */
    apply {
        verify_checksum(hdr.ipv4.isValid(),
            { hdr.ipv4.version, hdr.ipv4.ihl, hdr.ipv4.diffserv, hdr.ipv4.totalLen,
              hdr.ipv4.identification, hdr.ipv4.flags, hdr.ipv4.fragOffset, hdr.ipv4.ttl,
              hdr.ipv4.protocol, hdr.ipv4.srcAddr, hdr.ipv4.dstAddr },
            hdr.ipv4.hdrChecksum, HashAlgorithm.csum16);
    }
}

/*************************************************************************
**************   C H E C K S U M    C O M P U T A T I O N   **************
*************************************************************************/

control RlComputeChecksum(inout headers hdr, inout metadata meta) {
    apply {
        update_checksum(hdr.ipv4.isValid(),
            { hdr.ipv4.version, hdr.ipv4.ihl, hdr.ipv4.diffserv, hdr.ipv4.totalLen,
              hdr.ipv4.identification, hdr.ipv4.flags, hdr.ipv4.fragOffset, hdr.ipv4.ttl,
              hdr.ipv4.protocol, hdr.ipv4.srcAddr, hdr.ipv4.dstAddr },
            hdr.ipv4.hdrChecksum, HashAlgorithm.csum16);
        update_checksum(hdr.outer_ipv4.isValid(),
            { hdr.outer_ipv4.version, hdr.outer_ipv4.ihl, hdr.outer_ipv4.diffserv,
              hdr.outer_ipv4.totalLen, hdr.outer_ipv4.identification, hdr.outer_ipv4.flags,
              hdr.outer_ipv4.fragOffset, hdr.outer_ipv4.ttl, hdr.outer_ipv4.protocol,
              hdr.outer_ipv4.srcAddr, hdr.outer_ipv4.dstAddr },
            hdr.outer_ipv4.hdrChecksum, HashAlgorithm.csum16);
    }
}

/*************************************************************************
***********************  D E P A R S E R  *******************************
*************************************************************************/

control RlDeparser(packet_out packet, in headers hdr) {
    apply {
        packet.emit(hdr.ethernet);
        packet.emit(hdr.outer_ipv4);
        packet.emit(hdr.gre);
        packet.emit(hdr.ipv4);
        packet.emit(hdr.ports);
    }
}

/*************************************************************************
***********************  C O U N T E R S  *******************************
*************************************************************************/

/* Packets sent per egress port: the engine's "forwarded" count is port 1's. */
control RlEgress(inout headers hdr, inout metadata meta,
                 inout standard_metadata_t standard_metadata) {
    counter(16, CounterType.packets_and_bytes) tx_port;
    apply {
        tx_port.count((bit<32>)standard_metadata.egress_port);
    }
}

#endif

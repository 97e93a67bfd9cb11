/* headers.p4 -- header types and metadata shared by every routerlab P4 program.
 *
 * The parser extracts Ethernet, IPv4 and the first four bytes of UDP/TCP (the ports:
 * all the firewall looks at). outer_ipv4 and gre are never parsed: the GRE program makes
 * them valid to encapsulate. */
#ifndef ROUTERLAB_HEADERS_P4
#define ROUTERLAB_HEADERS_P4

typedef bit<9>  port_t;
typedef bit<48> mac_t;
typedef bit<32> ip4_t;

const bit<16> ETHERTYPE_IPV4 = 0x0800;
const bit<8>  PROTO_TCP = 6;
const bit<8>  PROTO_UDP = 17;
const bit<8>  PROTO_GRE = 47;

header ethernet_t {
    mac_t     dst;
    mac_t     src;
    bit<16>   etherType;
}

header ipv4_t {
    bit<4>    version;
    bit<4>    ihl;
    bit<8>    diffserv;
    bit<16>   totalLen;
    bit<16>   identification;
    bit<3>    flags;
    bit<13>   fragOffset;
    bit<8>    ttl;
    bit<8>    protocol;
    bit<16>   hdrChecksum;
    ip4_t     srcAddr;
    ip4_t     dstAddr;
}

/* RFC 2784 GRE without checksum, key or sequence number: 4 bytes. */
header gre_t {
    bit<16>   flagsVersion;
    bit<16>   protocol;
}

/* Source and destination port: the first 4 bytes of both UDP and TCP. */
header l4ports_t {
    bit<16>   srcPort;
    bit<16>   dstPort;
}

struct headers {
    ethernet_t ethernet;
    ipv4_t     outer_ipv4;   /* GRE only, made valid by the encapsulation */
    gre_t      gre;          /* GRE only */
    ipv4_t     ipv4;
    l4ports_t  ports;
}

struct metadata {
    bit<16>   dstPort;       /* 0 when the packet has no UDP/TCP header */
}

#endif

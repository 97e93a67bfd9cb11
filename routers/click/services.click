// services.click -- network functions routerlab's Click routers compose, as a library:
// GRE encapsulation, source NAT and a hash-based load balancer. Required before
// tables.click (which may use GRETunnel) by every configuration here.

// GRETunnel: GRE-encapsulate an IP packet towards $dst (RFC 2784: no checksum, key or
// sequence number). Click has no GRE element, so compose one: make room for the 4-byte
// GRE header in front of the packet, write it (no flags, version 0, protocol 0x0800),
// then put an outer IPv4 header with protocol 47 around both.
elementclass GRETunnel { $src, $dst |
  input -> Unstrip(4)
        -> StoreData(0, \<0000 0800>)
        -> IPEncap(47, $src, $dst, TTL 64)
        -> output;
}

// SourceNAT: rewrite connections from the inside to come from $public (MazuNAT's
// outgoing half), and map the replies back. IPRewriter keeps the flow table.
//   input 0  packets from the inside      -> output 0, source rewritten to $public:port
//   input 1  packets from the outside     -> output 1, replies mapped back to the inside;
//            anything that is not a reply to a mapped flow is dropped
// Packets need the IP header annotation (CheckIPHeader before this).
elementclass SourceNAT { $public |
  rw :: IPRewriter(pattern $public 1024-65535# - - 0 1, drop);
  input[0] -> [0]rw;
  input[1] -> [1]rw;
  rw[0] -> [0]output;
  rw[1] -> [1]output;
}

// LoadBalancer: send each flow to one of four backends by a hash of its addresses and
// ports (HashSwitch over source, destination and the two ports: no IP options), with the
// destination rewritten to that backend. Every packet of a flow picks the same backend;
// IPRewriter fixes the IP and transport checksums.
//   input 0 -> output 0
elementclass LoadBalancer { $b0, $b1, $b2, $b3 |
  input -> hs :: HashSwitch(12, 12);
  rw :: IPRewriter(pattern - - $b0 - 0 1, pattern - - $b1 - 0 1,
                   pattern - - $b2 - 0 1, pattern - - $b3 - 0 1);
  hs[0] -> [0]rw;
  hs[1] -> [1]rw;
  hs[2] -> [2]rw;
  hs[3] -> [3]rw;
  rw[0] -> output;
  rw[1] -> Discard;   // only replies would come out here; none go in
}

// router-core.click -- the IPv4 forwarding path of routerlab's Click routers, as a library.
//
// elementclass IPRouter: Ethernet frames from the generator side in on input 0;
// frames for the sink side out on output 0, ICMP errors for the generator side on
// output 1. Used by iprouter.click (real devices) and iprouter-nodev.click (no devices).
//
// Parameters of IPRouter (all addresses come from the AddressInfo of the including file):
//   $next_mac  Ethernet address of the next hop on the sink side (static: no ARP there)
//   $prev_mac  Ethernet address of the sender side's host, for ICMP errors
//   $mtu       MTU of the sink-side link, bytes
// Routes, firewall and tunnel come from the generated library tables.click (routerlab
// writes it from the scenario; never edit it by hand):
//   elementclass Routes    output 0 = towards the sink, output 1 = no route
//   elementclass Firewall  IPFilter rules, first match wins; passes what it allows
//   elementclass Tunnel    passes packets as they are, or through GRETunnel (services.click)

elementclass IPRouter { $next_mac, $prev_mac, $mtu |

  // CLASSIFY: output 0 = IPv4, output 1 = anything else (ARP is static on the testbed)
  input -> cl :: Classifier(12/0800, -);
  cl[1] -> Discard;

  // CHECK AND FILTER
  cl[0] -> Strip(14)
        -> CheckIPHeader(INTERFACES in_if)    // drops bad versions, lengths, checksums, martians
        -> fw :: Firewall
        -> GetIPAddress(16)                   // destination address annotation, for the lookup
        -> rt :: Routes;

  // FORWARD: TTL, fragmentation, next-hop Ethernet header
  rt[0] -> DropBroadcasts
        -> ttl :: DecIPTTL                    // also fixes the checksum incrementally
        -> Tunnel
        -> frag :: IPFragmenter($mtu)
        -> EtherEncap(0x0800, out_if, $next_mac)
        -> [0]output;

  // ICMP ERRORS a router owes, sent back towards the sender side
  ttl[1]  -> ICMPError(in_if, timeexceeded) -> errors :: EtherEncap(0x0800, in_if, $prev_mac) -> [1]output;
  frag[1] -> ICMPError(in_if, unreachable, needfrag) -> errors;
  rt[1]   -> ICMPError(in_if, unreachable, net) -> errors;
}

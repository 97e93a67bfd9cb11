#ifndef ROUTERLAB_HEADERACTIONCACHE_HH
#define ROUTERLAB_HEADERACTIONCACHE_HH
#include <click/element.hh>
#include <click/hashtable.hh>
#include <click/ipflowid.hh>
CLICK_DECLS

/*
=c

HeaderActionCache()

=s routerlab

per-flow cache of the header actions a chain of network functions applied

=d

FastPath-style header-action consolidation. Input 0 takes IP packets with the IP header
annotation (CheckIPHeader). A flow's first packet leaves on output 1 towards a chain of
network functions whose end is connected back to input 1. When it comes back,
HeaderActionCache records what the chain did to the header (the final addresses and
ports), or that it dropped the packet, and sends it on to output 0. Later packets of the
flow skip the chain: one lookup, one rewrite (with incremental checksum updates for IP
and UDP/TCP), straight to output 0; or dropped, if the chain dropped the first one.

The chain must be push-only, without queues, and every packet it returns must be the one
it was given. A flow is its addresses and ports (IPFlowID).

=h hits read-only
Packets that took the cached action.

=h misses read-only
First packets, sent through the chain.

=h flows read-only
Flows in the cache.
*/

class HeaderActionCache : public Element { public:

    HeaderActionCache() CLICK_COLD;

    const char *class_name() const override { return "HeaderActionCache"; }
    const char *port_count() const override { return "2/2"; }
    const char *processing() const override { return PUSH; }

    void push(int port, Packet *p) override;
    void add_handlers() override CLICK_COLD;

  private:

    struct Action {
        bool drop;
        uint32_t saddr, daddr;     // network order
        uint16_t sport, dport;     // network order
    };

    HashTable<IPFlowID, Action> _table;
    IPFlowID _pending;
    bool _pending_active;
    bool _pending_returned;
    uint64_t _hits;
    uint64_t _misses;

    Packet *apply(Packet *p, const Action &a);
    static String read_handler(Element *e, void *thunk) CLICK_COLD;

};

CLICK_ENDDECLS
#endif

// headeractioncache.cc -- see headeractioncache.hh. Part of routerlab's Click element
// package (routers/click/elements); routerlab builds it against the installed Click.
#include <click/config.h>
#include "headeractioncache.hh"
#include <clicknet/ip.h>
#include <clicknet/tcp.h>
#include <clicknet/udp.h>
CLICK_DECLS

HeaderActionCache::HeaderActionCache()
    : _pending_active(false), _pending_returned(false), _hits(0), _misses(0)
{
}

// Change a 32-bit field inside a one's-complement sum; the halves are summed in either
// order, so raw (network order) values work on any host.
static inline void
update_cksum32(uint16_t *sum, uint32_t old_value, uint32_t new_value)
{
    click_update_in_cksum(sum, old_value & 0xFFFF, new_value & 0xFFFF);
    click_update_in_cksum(sum, old_value >> 16, new_value >> 16);
}

Packet *
HeaderActionCache::apply(Packet *p, const Action &a)
{
    WritablePacket *q = p->uniqueify();
    if (!q)
        return 0;
    click_ip *ip = q->ip_header();
    uint16_t *l4sum = 0;
    uint16_t *ports = 0;
    if (IP_FIRSTFRAG(ip) && q->transport_length() >= 8) {
        ports = reinterpret_cast<uint16_t *>(q->transport_header());
        if (ip->ip_p == IP_PROTO_TCP && q->transport_length() >= (int) sizeof(click_tcp))
            l4sum = &q->tcp_header()->th_sum;
        else if (ip->ip_p == IP_PROTO_UDP && q->udp_header()->uh_sum != 0)
            l4sum = &q->udp_header()->uh_sum;   // 0: the sender sent no checksum
    }
    if (ip->ip_src.s_addr != a.saddr) {
        update_cksum32(&ip->ip_sum, ip->ip_src.s_addr, a.saddr);
        if (l4sum)
            update_cksum32(l4sum, ip->ip_src.s_addr, a.saddr);
        ip->ip_src.s_addr = a.saddr;
    }
    if (ip->ip_dst.s_addr != a.daddr) {
        update_cksum32(&ip->ip_sum, ip->ip_dst.s_addr, a.daddr);
        if (l4sum)
            update_cksum32(l4sum, ip->ip_dst.s_addr, a.daddr);
        ip->ip_dst.s_addr = a.daddr;
    }
    if (ports) {
        if (ports[0] != a.sport) {
            if (l4sum)
                click_update_in_cksum(l4sum, ports[0], a.sport);
            ports[0] = a.sport;
        }
        if (ports[1] != a.dport) {
            if (l4sum)
                click_update_in_cksum(l4sum, ports[1], a.dport);
            ports[1] = a.dport;
        }
    }
    q->set_dst_ip_anno(IPAddress(a.daddr));
    return q;
}

void
HeaderActionCache::push(int port, Packet *p)
{
    if (port == 0) {
        IPFlowID flow(p);
        if (Action *a = _table.get_pointer(flow)) {
            ++_hits;
            if (a->drop) {
                p->kill();
                return;
            }
            if ((p = apply(p, *a)))
                output(0).push(p);
            return;
        }
        // first packet: through the chain, which returns it on input 1 or drops it
        ++_misses;
        _pending = flow;
        _pending_active = true;
        _pending_returned = false;
        output(1).push(p);
        if (!_pending_returned) {
            Action drop = {true, 0, 0, 0, 0};
            _table.set(flow, drop);
        }
        _pending_active = false;
        return;
    }

    // input 1: the end of the chain
    if (_pending_active && !_pending_returned) {
        const click_ip *ip = p->ip_header();
        Action a = {false, ip->ip_src.s_addr, ip->ip_dst.s_addr, 0, 0};
        if (IP_FIRSTFRAG(ip) && p->transport_length() >= 4) {
            const uint16_t *ports = reinterpret_cast<const uint16_t *>(p->transport_header());
            a.sport = ports[0];
            a.dport = ports[1];
        }
        _table.set(_pending, a);
        _pending_returned = true;
    }
    output(0).push(p);
}

String
HeaderActionCache::read_handler(Element *e, void *thunk)
{
    HeaderActionCache *c = static_cast<HeaderActionCache *>(e);
    switch ((intptr_t) thunk) {
    case 0: return String(c->_hits);
    case 1: return String(c->_misses);
    default: return String(c->_table.size());
    }
}

void
HeaderActionCache::add_handlers()
{
    add_read_handler("hits", read_handler, 0);
    add_read_handler("misses", read_handler, 1);
    add_read_handler("flows", read_handler, 2);
}

CLICK_ENDDECLS
EXPORT_ELEMENT(HeaderActionCache)

// SPDX-License-Identifier: GPL-2.0
/*
 * xdp_router.c -- routerlab's eBPF/XDP IPv4 router.
 *
 * On the DUT's ingress veth: parse Ethernet/IPv4(/UDP/TCP), run a firewall of up to
 * MAX_RULES rules kept in a map (first match wins, else the default policy), look the
 * destination up in the kernel FIB (bpf_fib_lookup: the same routes the kernel has),
 * decrement the TTL, rewrite the MACs, optionally GRE-encapsulate towards the far end
 * (this kernel has no GRE module: the program builds the outer header itself), and
 * redirect to the egress interface. Packets it cannot handle go to the kernel (XDP_PASS),
 * where routerlab's guard table drops and counts them, so the kernel never forwards
 * unnoticed.
 *
 * A redirect into a veth needs an XDP program on the peer as well: xdp_pass.c.
 * Compiled by routerlab at set-up: clang -O2 -g -target bpf -c xdp_router.c
 */
#include <linux/bpf.h>
#include <linux/if_ether.h>
#include <linux/in.h>
#include <linux/ip.h>
#include <linux/udp.h>
#include <bpf/bpf_endian.h>
#include <bpf/bpf_helpers.h>

#ifndef AF_INET
#define AF_INET 2
#endif
#define MAX_RULES 64
#define IPPROTO_GRE_ 47

/* ---- maps ---- */
struct rule {
    __u32 saddr, smask;      /* network order */
    __u32 daddr, dmask;
    __u16 dport_lo, dport_hi; /* host order; 0..65535 = any */
    __u8 proto;              /* 0 = any */
    __u8 action;             /* 0 = drop, 1 = accept */
    __u8 dport_negate;       /* match ports outside [lo, hi] */
    __u8 pad;
};

struct config {
    __u32 nrules;
    __u32 policy;            /* 0 = drop, 1 = accept */
    __u32 gre;               /* encapsulate towards gre_dst */
    __u32 gre_src, gre_dst;  /* network order */
};

enum { ST_RX, ST_FWD, ST_FW_DROP, ST_PASS, ST_ERR, ST_MAX };

struct {
    __uint(type, BPF_MAP_TYPE_ARRAY);
    __uint(max_entries, MAX_RULES);
    __type(key, __u32);
    __type(value, struct rule);
} rl_rules SEC(".maps");

struct {
    __uint(type, BPF_MAP_TYPE_ARRAY);
    __uint(max_entries, 1);
    __type(key, __u32);
    __type(value, struct config);
} rl_config SEC(".maps");

struct {
    __uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
    __uint(max_entries, ST_MAX);
    __type(key, __u32);
    __type(value, __u64);
} rl_stats SEC(".maps");

static __always_inline void count(__u32 k)
{
    __u64 *v = bpf_map_lookup_elem(&rl_stats, &k);
    if (v)
        *v += 1;
}

/* ---- helpers ---- */
static __always_inline void ttl_dec(struct iphdr *ip)
{
    /* RFC 1624 incremental checksum update for TTL - 1 */
    __u32 c = ip->check;
    c += bpf_htons(0x0100);
    ip->check = (__u16)(c + (c >= 0xFFFF));
    ip->ttl--;
}

static __always_inline __u16 csum_ip(struct iphdr *ip)
{
    __u32 sum = 0;
    __u16 *p = (__u16 *)ip;
#pragma unroll
    for (int i = 0; i < 10; i++)
        sum += p[i];
    sum = (sum & 0xffff) + (sum >> 16);
    sum = (sum & 0xffff) + (sum >> 16);
    return ~sum;
}

struct fw_ctx {
    __u32 saddr, daddr;
    __u16 dport;
    __u8 proto;
    int verdict; /* -1 = no match yet */
};

static long fw_step(__u32 i, void *data)
{
    struct fw_ctx *c = data;
    struct rule *r = bpf_map_lookup_elem(&rl_rules, &i);
    if (!r)
        return 1;
    if ((c->saddr & r->smask) != r->saddr || (c->daddr & r->dmask) != r->daddr)
        return 0;
    if (r->proto && r->proto != c->proto)
        return 0;
    int in = c->dport >= r->dport_lo && c->dport <= r->dport_hi;
    if (in == r->dport_negate)
        return 0;
    c->verdict = r->action;
    return 1; /* first match wins */
}

SEC("xdp")
int xdp_router(struct xdp_md *ctx)
{
    void *data = (void *)(long)ctx->data, *end = (void *)(long)ctx->data_end;
    struct ethhdr *eth = data;
    __u32 zero = 0;

    count(ST_RX);
    if ((void *)(eth + 1) > end || eth->h_proto != bpf_htons(ETH_P_IP))
        goto pass;
    struct iphdr *ip = (void *)(eth + 1);
    if ((void *)(ip + 1) > end || ip->ihl != 5)
        goto pass;
    if (ip->ttl <= 1)
        goto pass; /* the kernel owes the ICMP time-exceeded */

    struct config *cfg = bpf_map_lookup_elem(&rl_config, &zero);
    if (!cfg)
        goto pass;

    if (cfg->nrules) {
        struct fw_ctx c = {.saddr = ip->saddr, .daddr = ip->daddr, .proto = ip->protocol, .verdict = -1};
        if (ip->protocol == IPPROTO_UDP || ip->protocol == IPPROTO_TCP) {
            struct udphdr *udp = (void *)(ip + 1); /* dest port at the same offset for TCP */
            if ((void *)(udp + 1) > end)
                goto pass;
            c.dport = bpf_ntohs(udp->dest);
        }
        bpf_loop(cfg->nrules < MAX_RULES ? cfg->nrules : MAX_RULES, fw_step, &c, 0);
        int v = c.verdict < 0 ? (int)cfg->policy : c.verdict;
        if (!v) {
            count(ST_FW_DROP);
            return XDP_DROP;
        }
    }

    struct bpf_fib_lookup fib = {};
    fib.family = AF_INET;
    fib.tos = ip->tos;
    fib.l4_protocol = ip->protocol;
    fib.tot_len = bpf_ntohs(ip->tot_len);
    fib.ipv4_src = ip->saddr;
    fib.ipv4_dst = ip->daddr;
    fib.ifindex = ctx->ingress_ifindex;
    if (bpf_fib_lookup(ctx, &fib, sizeof fib, 0) != BPF_FIB_LKUP_RET_SUCCESS)
        goto pass;

    ttl_dec(ip);
    if (cfg->gre) {
        /* make room for outer IPv4 + 4-byte GRE header in front of the inner IP packet */
        if (bpf_xdp_adjust_head(ctx, -(int)(sizeof(struct iphdr) + 4)))
            goto err;
        data = (void *)(long)ctx->data;
        end = (void *)(long)ctx->data_end;
        eth = data;
        struct iphdr *outer = (void *)(eth + 1);
        __u16 *gre = (void *)(outer + 1);
        struct iphdr *inner = (void *)(gre + 2);
        if ((void *)(inner + 1) > end)
            goto err;
        eth->h_proto = bpf_htons(ETH_P_IP);
        outer->version = 4;
        outer->ihl = 5;
        outer->tos = 0;
        outer->tot_len = bpf_htons(bpf_ntohs(inner->tot_len) + sizeof(struct iphdr) + 4);
        outer->id = 0;
        outer->frag_off = bpf_htons(0x4000); /* DF */
        outer->ttl = 64;
        outer->protocol = IPPROTO_GRE_;
        outer->saddr = cfg->gre_src;
        outer->daddr = cfg->gre_dst;
        outer->check = 0;
        outer->check = csum_ip(outer);
        gre[0] = 0;                     /* no checksum, key or sequence; version 0 */
        gre[1] = bpf_htons(ETH_P_IP);   /* payload: IPv4 */
    }
    __builtin_memcpy(eth->h_dest, fib.dmac, ETH_ALEN);
    __builtin_memcpy(eth->h_source, fib.smac, ETH_ALEN);
    count(ST_FWD);
    return bpf_redirect(fib.ifindex, 0);

err:
    count(ST_ERR);
    return XDP_ABORTED;
pass:
    count(ST_PASS);
    return XDP_PASS;
}

char _license[] SEC("license") = "GPL";

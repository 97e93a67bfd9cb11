// SPDX-License-Identifier: GPL-2.0
/* shortcut_tc.c -- ShortCut's loop detection and route switch in eBPF (tc ingress).
 *
 * Attached to every ingress of a router. rl_protected holds, per destination prefix, the
 * interface of the router's current next hop towards it. A packet for a protected
 * destination that arrives on that very interface has come back through a loop
 * ("Shortcutting Fast Failover Routes in the Data Plane"): the program writes the
 * destination into rl_looped. Every packet whose destination is in rl_looped gets
 * skb->mark = RL_MARK, which the router's policy routing sends to the next alternative
 * (ip rule fwmark RL_MARK -> the alternative table). Detection and switch both happen
 * here, in the packet path; no daemon polls anything.
 */
#include <linux/bpf.h>
#include <linux/if_ether.h>
#include <linux/ip.h>
#include <linux/pkt_cls.h>
#include <bpf/bpf_endian.h>
#include <bpf/bpf_helpers.h>

#define RL_MARK 0x5c

struct lpm_key {
    __u32 prefixlen;
    __u32 addr;              /* network order */
};

struct {
    __uint(type, BPF_MAP_TYPE_LPM_TRIE);
    __uint(map_flags, BPF_F_NO_PREALLOC);
    __uint(max_entries, 256);
    __type(key, struct lpm_key);
    __type(value, __u32);    /* ifindex of the current next hop */
} rl_protected SEC(".maps");

struct {
    __uint(type, BPF_MAP_TYPE_HASH);
    __uint(max_entries, 4096);
    __type(key, __u32);      /* destination address, network order */
    __type(value, __u64);    /* when the loop was seen (ns, monotonic) */
} rl_looped SEC(".maps");

SEC("tc")
int shortcut(struct __sk_buff *skb)
{
    void *data = (void *)(long)skb->data;
    void *data_end = (void *)(long)skb->data_end;
    struct ethhdr *eth = data;
    struct iphdr *ip = (void *)(eth + 1);

    if ((void *)(ip + 1) > data_end || eth->h_proto != bpf_htons(ETH_P_IP))
        return TC_ACT_OK;
    __u32 daddr = ip->daddr;
    if (bpf_map_lookup_elem(&rl_looped, &daddr)) {
        skb->mark = RL_MARK;
        return TC_ACT_OK;
    }
    struct lpm_key key = {32, daddr};
    __u32 *nh_ifindex = bpf_map_lookup_elem(&rl_protected, &key);
    if (nh_ifindex && *nh_ifindex == skb->ingress_ifindex) {
        __u64 now = bpf_ktime_get_ns();
        bpf_map_update_elem(&rl_looped, &daddr, &now, BPF_ANY);
        skb->mark = RL_MARK;
    }
    return TC_ACT_OK;
}

char _license[] SEC("license") = "GPL";

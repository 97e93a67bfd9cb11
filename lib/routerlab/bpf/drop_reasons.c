// SPDX-License-Identifier: GPL-2.0
/* drop_reasons.c -- counts the packets the kernel frees as dropped, per network namespace
 * and drop reason, on the tracepoint skb:kfree_skb (routerlab.measuring.drops reads the map).
 *
 * Key: the inode of the namespace of the device the packet was on (0 when the packet has
 * no device any more) and the kernel's drop reason (enum skb_drop_reason, named from the
 * tracepoint's print fmt by routerlab.measuring.drops). Value: packets, added atomically, since the
 * generator's and the router's CPUs free packets at the same time.
 *
 * Packets on a loopback device are not counted: a trial's packets cross veths only, while
 * the testbed's own control connections run over loopback (simple_switch_CLI's Thrift
 * connection in the DUT leaves one NOT_SPECIFIED drop in tcp_v4_rcv each time it closes).
 *
 * Attached as a BTF tracepoint (tp_btf): the program gets the tracepoint's arguments
 * (sk_buff, location, reason) directly, without the trace record the classic tracepoint
 * fills for every event first; the sink frees every packet of a trial, so this runs at the
 * full packet rate. Field reads are CO-RE (vmlinux.h dumped from this kernel's BTF at
 * build time), so the object loads on any kernel whose sk_buff, net_device and net hold
 * these fields. */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>

struct drop_key {
    __u32 netns;   /* inode of the network namespace, 0: no device */
    __u32 reason;  /* enum skb_drop_reason */
};

struct {
    __uint(type, BPF_MAP_TYPE_HASH);
    __uint(max_entries, 4096);
    __type(key, struct drop_key);
    __type(value, __u64);
} rl_drops SEC(".maps");

SEC("tp_btf/kfree_skb")
int BPF_PROG(rl_kfree_skb, struct sk_buff *skb, void *location, enum skb_drop_reason reason)
{
    struct drop_key key = {.reason = reason};
    struct net_device *dev = skb->dev;
    __u64 one = 1, *n;

    if (dev) {
        if (dev->flags & IFF_LOOPBACK)
            return 0;
        key.netns = dev->nd_net.net->ns.inum;
    }
    n = bpf_map_lookup_elem(&rl_drops, &key);
    if (n) {
        __sync_fetch_and_add(n, 1);
        return 0;
    }
    /* first drop of this key: another CPU may create it at the same moment, so insert only
     * if absent and add to whichever entry won */
    if (bpf_map_update_elem(&rl_drops, &key, &one, BPF_NOEXIST) == 0)
        return 0;
    n = bpf_map_lookup_elem(&rl_drops, &key);
    if (n)
        __sync_fetch_and_add(n, 1);
    return 0;
}

char _license[] SEC("license") = "GPL";

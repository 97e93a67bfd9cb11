// SPDX-License-Identifier: GPL-2.0
/* xdp_sink.c -- the sink in XDP: counts every frame in a per-CPU array (counts[0]) and
 * drops it, so that receiving costs one XDP run per packet and no socket buffer. */
#include <linux/bpf.h>
#include <bpf/bpf_helpers.h>

struct {
    __uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
    __uint(max_entries, 1);
    __type(key, __u32);
    __type(value, __u64);
} counts SEC(".maps");

SEC("xdp")
int xdp_sink(struct xdp_md *ctx)
{
    __u32 key = 0;
    __u64 *n = bpf_map_lookup_elem(&counts, &key);

    if (n)
        *n += 1;
    return XDP_DROP;
}

char _license[] SEC("license") = "GPL";

// SPDX-License-Identifier: GPL-2.0
/* xdp_pass.c -- passes every packet. A veth only accepts XDP redirects from its peer
 * when an XDP program is attached to it too; routerlab puts this one on the sink side. */
#include <linux/bpf.h>
#include <bpf/bpf_helpers.h>

SEC("xdp")
int xdp_pass(struct xdp_md *ctx)
{
    return XDP_PASS;
}

char _license[] SEC("license") = "GPL";

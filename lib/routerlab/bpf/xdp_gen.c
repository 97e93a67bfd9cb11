// SPDX-License-Identifier: GPL-2.0
/* xdp_gen.c -- the generator's XDP program, run by csrc/rlxdpgen.c with BPF_PROG_RUN and
 * live frames, as fast as the CPU goes; a run is one execution of the program on one
 * frame. It paces in the program: a run whose frame is due by the schedule is redirected
 * out of the generator's veth; one that is early is dropped, which costs a run and no
 * packet. The schedule is rlgen's: bursts of `burst` frames, burst k due at
 * start + k * burst / rate, its frames sent in consecutive runs, so that they reach the
 * receiver in one flush and wake it once (a wake-up of the router's NAPI thread costs its
 * CPU microseconds); the clock is read at a burst's first frame only. Behind its
 * schedule by more than a burst (CATCHUP_OVER_BURSTS), it catches up at 1.5 times the rate,
 * never faster (CATCHUP_NUM). It measures a lag as rlgen does: the worst lateness,
 * and each lag over LAG_OVER_NS, its worst, added up. At no rate (interval 0: as fast as
 * it can) nothing is late. The frames are rlgen's (its --print-frames): the loader writes
 * their headers into the map of templates, and the program takes them in turn, as rlgen
 * does, counting those meant to pass the firewall (legit). */
#include <linux/bpf.h>
#include <bpf/bpf_helpers.h>

#define LAG_OVER_NS 5000000ULL   /* lags over 5 ms are added up (traffic.STOP_TOTAL_OVER_MS) */
#define LAG_ENDS_NS 1000000ULL   /* a lag ends back within 1 ms of the schedule */
/* a lag is made up at no more than CATCHUP_NUM / CATCHUP_DEN times the rate: what is owed
 * after a stop of the generator's CPU (or of the whole machine) reaches the router spread
 * over about twice the stop, where sending it at once would fill a 256-slot veth ring that
 * the router, faster than the load, keeps nearly empty */
#define CATCHUP_NUM 3ULL
#define CATCHUP_DEN 2ULL
/* only a lag of more than this many bursts is made up gently; the rest goes at once, a
 * burst as on the schedule. The catch-up keeps a schedule of its own: held to a
 * spacing between bursts instead, the generator lost the time its CPU gave the sink, and
 * near its ceiling, where it runs a little behind all the time, 6-8% of its rate
 * (docs/journal/2026-11-28-housekeeping-off-the-router-cpu.md) */
#define CATCHUP_OVER_BURSTS 1ULL
/* the catch-up's own schedule makes up no more than this many bursts at once: the sink's
 * turns on the generator's CPU (the frames of its ring, a few tens of microseconds) are
 * made up, half the router's 256-slot ring at most; a stop of the generator that comes
 * during a catch-up (its process or the machine held up), which that schedule would send
 * at once, is made up at 1.5 times the rate like any other lag
 * (docs/journal/2026-12-02-catch-up-after-a-stop.md) */
#define CATCHUP_BEHIND_BURSTS 4ULL
#define HDR 48                   /* Ethernet, IPv4 and UDP headers, rounded up */
#define MAX_TEMPLATES 1024       /* as rlgen's */

struct gen_state {
    __u64 ifindex;      /* in: where frames go */
    __u64 interval_ps;  /* in: picoseconds between frames (0: as fast as it can) */
    __u64 total;        /* in: frames to send */
    __u64 start_ns;     /* the first run's time */
    __u64 sent;         /* frames redirected */
    __u64 late_max_ns;  /* the worst lateness */
    __u64 lagged_ns;    /* lags over LAG_OVER_NS, each its worst, added up */
    __u64 lag_worst_ns; /* the worst of the lag under way */
    __u64 runs;         /* every run, sent or early */
    __u64 last_ns;      /* the time of the last burst's first frame */
    __u64 templates;    /* in: templates in use, 1..MAX_TEMPLATES */
    __u64 legit;        /* frames redirected that are meant to pass the firewall */
    __u64 burst;        /* in: frames sent back to back at each time of the schedule, >= 1 */
    __u64 catch_ns;     /* when the catch-up under way began (0: none) */
    __u64 catch_sent;   /* frames sent by then */
};

struct template {
    __u8 hdr[HDR];      /* the frame's headers, written into the frame sent */
    __u32 legit;        /* 1: meant to pass the firewall */
};

struct {
    __uint(type, BPF_MAP_TYPE_ARRAY);
    __uint(max_entries, MAX_TEMPLATES);
    __type(key, __u32);
    __type(value, struct template);
} templates SEC(".maps");

struct {
    __uint(type, BPF_MAP_TYPE_ARRAY);
    __uint(max_entries, 1);
    __type(key, __u32);
    __type(value, struct gen_state);
} state SEC(".maps");

SEC("xdp")
int xdp_gen(struct xdp_md *ctx)
{
    __u32 key = 0;
    struct gen_state *s = bpf_map_lookup_elem(&state, &key);
    __u64 now, due, late;

    if (!s)
        return XDP_ABORTED;
    s->runs++;
    if (s->sent >= s->total)
        return XDP_DROP;
    if (s->burst > 1 && s->sent % s->burst) {
        /* the rest of a burst under way: due with its first frame, no clock read (reading
         * the clock is a good part of a frame's cost) */
        now = s->last_ns;
        goto send;
    }
    now = bpf_ktime_get_ns();
    if (!s->start_ns)
        s->start_ns = now;
    if (!s->interval_ps)
        goto send;
    due = s->start_ns + (s->burst > 1 ? s->sent - s->sent % s->burst : s->sent) * s->interval_ps / 1000;
    if (now < due)
        return XDP_DROP;
    late = now - due;
    if (late <= CATCHUP_OVER_BURSTS * s->burst * s->interval_ps / 1000) {
        s->catch_ns = 0;
    } else if (!s->catch_ns) {
        s->catch_ns = now;
        s->catch_sent = s->sent;
    } else {
        /* catching up on a schedule of its own at CATCHUP_NUM / CATCHUP_DEN times the rate,
         * from when the lag was found: time the generator could not send (the sink took its
         * CPU) is made up later, as on the main schedule */
        __u64 catch_due = s->catch_ns + (s->sent - s->catch_sent) * s->interval_ps * CATCHUP_DEN / (CATCHUP_NUM * 1000);
        if (now < catch_due)
            return XDP_DROP;
        /* behind that schedule too by more than CATCHUP_BEHIND_BURSTS: the schedule's
         * start moves on by the excess. No frame is written off: what is owed stays owed
         * to the main schedule, and is sent at 1.5 times the rate from here */
        __u64 behind = CATCHUP_BEHIND_BURSTS * s->burst * s->interval_ps * CATCHUP_DEN / (CATCHUP_NUM * 1000);
        if (now - catch_due > behind)
            s->catch_ns += now - catch_due - behind;
    }
    if (late > s->late_max_ns)
        s->late_max_ns = late;
    if (late > LAG_OVER_NS) {
        if (late > s->lag_worst_ns)
            s->lag_worst_ns = late;
    } else if (s->lag_worst_ns && late < LAG_ENDS_NS) {
        s->lagged_ns += s->lag_worst_ns;
        s->lag_worst_ns = 0;
    }
send:;
    /* live frames are recycled from a page pool, and a receiver that passes a frame to the
     * stack may rewrite it in place (a router: MACs, TTL) before the page comes back: the
     * headers are written again, so every frame leaves as the loader gave it */
    __u32 idx = s->templates > 1 ? s->sent % s->templates : 0;
    struct template *t = bpf_map_lookup_elem(&templates, &idx);
    void *data = (void *)(long)ctx->data, *end = (void *)(long)ctx->data_end;
    if (!t || data + HDR > end)
        return XDP_ABORTED;
    __builtin_memcpy(data, t->hdr, HDR);
    s->legit += t->legit;
    s->sent++;
    s->last_ns = now;
    return bpf_redirect(s->ifindex, 0);
}

char _license[] SEC("license") = "GPL";
